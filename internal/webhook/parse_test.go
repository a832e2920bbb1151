package webhook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	githubURLs = []string{"https://github.com/Acme/Shop-Config.git", "git@github.com:Acme/Shop-Config.git",
		"https://github.com/Acme/Shop-Config", "git://github.com/Acme/Shop-Config.git"}
	gitlabURLs = []string{"https://gitlab.example.com/platform/deploy/payments.git",
		"ssh://git@gitlab.example.com:2222/platform/deploy/payments.git", "https://gitlab.example.com/platform/deploy/payments"}
	bitbucketURLs = []string{"https://bitbucket.org/acme-team/fleet-manifests"}
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParse(t *testing.T) {
	tests := []struct {
		fixture  string
		provider Provider
		want     []Push
	}{
		{"github-push.json", GitHub, []Push{{
			Provider: GitHub, RepoURLs: githubURLs, Ref: "refs/heads/main",
			Before: "9a7f3c1e0b4d2a6f8e5c3b1a0d9e8f7c6b5a4d3e", After: "4e2b8d6f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b",
			DefaultBranch: true,
			Paths:         []string{"apps/cart/old-notes.md", "apps/cart/pdb.yaml", "apps/checkout/deployment.yaml"},
		}}},
		{"github-push-tag.json", GitHub, []Push{{
			Provider: GitHub, RepoURLs: githubURLs, Ref: "refs/tags/v1.4.0",
			After: "4e2b8d6f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b",
		}}},
		{"github-push-forced.json", GitHub, []Push{{ // a forced push's files are unknown
			Provider: GitHub, RepoURLs: githubURLs[:3], Ref: "refs/heads/release-2",
			Before: "5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d", After: "6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e",
		}}},
		{"github-push-deleted.json", GitHub, []Push{{
			Provider: GitHub, RepoURLs: githubURLs[:3], Ref: "refs/heads/feature/old-cart",
			Before: "5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d",
		}}},
		{"gitlab-push.json", GitLab, []Push{{
			Provider: GitLab, RepoURLs: gitlabURLs, Ref: "refs/heads/develop",
			Before: "95790bf891e76fee5e1747ab589903a6a1f80f22", After: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
			Paths: []string{"base/legacy-cron.yaml", "overlays/prod/kustomization.yaml", "overlays/prod/refunds-queue.yaml"},
		}}},
		{"gitlab-push-truncated.json", GitLab, []Push{{ // 31 commits, 1 listed: files unknown
			Provider: GitLab, RepoURLs: gitlabURLs, Ref: "refs/heads/main", DefaultBranch: true,
			Before: "95790bf891e76fee5e1747ab589903a6a1f80f22", After: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
		}}},
		{"gitlab-tag-push.json", GitLab, []Push{{
			Provider: GitLab, RepoURLs: gitlabURLs, Ref: "refs/tags/v2.7.1",
			After: "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
		}}},
		{"gitea-push.json", Gitea, []Push{{
			Provider: Gitea, Ref: "refs/heads/main", DefaultBranch: true,
			RepoURLs: []string{"https://git.example.org/infra/edge-proxy.git", "gitea@git.example.org:infra/edge-proxy.git",
				"https://git.example.org/infra/edge-proxy"},
			Before: "3f1c0b7a9e2d4c6b8a0f1e3d5c7b9a1f2e4d6c8b", After: "8d2e4f6a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e",
			Paths: []string{"envoy/kustomization.yaml", "envoy/ratelimit.yaml"},
		}}},
		{"bitbucket-push.json", Bitbucket, []Push{{
			Provider: Bitbucket, RepoURLs: bitbucketURLs, Ref: "refs/heads/main", DefaultBranch: true,
			Before: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", After: "f9e8d7c6b5a4938271605f4e3d2c1b0a98765432",
		}, {
			Provider: Bitbucket, RepoURLs: bitbucketURLs, Ref: "refs/tags/prod-2026-11-30",
			After: "f9e8d7c6b5a4938271605f4e3d2c1b0a98765432",
		}}},
		// Without repository.mainbranch, a branch push may have moved HEAD.
		{"bitbucket-push-nomainbranch.json", Bitbucket, []Push{{
			Provider: Bitbucket, RepoURLs: bitbucketURLs, Ref: "refs/heads/staging", DefaultBranch: true,
			Before: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := providers[tt.provider].parse(fixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct {
		name     string
		provider Provider
		payload  string
	}{
		{"not JSON", GitHub, `{"ref": "refs/heads/main",`},
		{"short ref", GitHub, `{"ref": "main", "repository": {"clone_url": "https://github.com/a/b.git"}}`},
		{"no repository", GitLab, `{"ref": "refs/heads/main", "project": {}}`},
		{"no URL", Gitea, `{"ref": "refs/heads/main", "repository": {"default_branch": "main"}}`},
		{"no changes", Bitbucket, `{"repository": {"full_name": "a/b"}, "push": {"changes": []}}`},
		{"neither side", Bitbucket, `{"repository": {"full_name": "a/b"}, "push": {"changes": [{"old": null, "new": null}]}}`},
		{"a Mercurial bookmark", Bitbucket, `{"repository": {"full_name": "a/b"}, "push": {"changes": [{"new": {"type": "bookmark", "name": "x"}}]}}`},
		{"array", GitHub, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := providers[tt.provider].parse([]byte(tt.payload)); err == nil {
				t.Fatalf("parsed %+v, want an error", got)
			}
		})
	}
}

// TestParsePathsBound: a push touching more files than maxPaths carries
// none (unknown), so that a signal stays small.
func TestParsePathsBound(t *testing.T) {
	commits := []commitFiles{{}}
	for i := range maxPaths + 1 {
		commits[0].Added = append(commits[0].Added, "f"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if got := changedPaths(commits, true); got != nil {
		t.Fatalf("got %d paths, want nil", len(got))
	}
	commits[0].Added = commits[0].Added[:maxPaths]
	if got := changedPaths(commits, true); len(got) != maxPaths {
		t.Fatalf("got %d paths, want %d", len(got), maxPaths)
	}
}

func TestFormPayload(t *testing.T) {
	got, err := jsonPayload("application/x-www-form-urlencoded", []byte("payload=%7B%22ref%22%3A1%7D"))
	if err != nil || string(got) != `{"ref":1}` {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := jsonPayload("application/x-www-form-urlencoded", []byte("other=1")); err == nil {
		t.Fatal("a form without payload parsed")
	}
}
