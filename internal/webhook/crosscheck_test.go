package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// serve runs r's pool and serves r on a loopback listener.
func serve(t *testing.T, r *Receiver) string {
	t.Helper()
	run(t, r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv.URL + Path
}

// post sends one delivery over HTTP and returns its status and message.
func post(t *testing.T, url string, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Message string }
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &answer); err != nil {
		t.Fatalf("answer %q: %v", data, err)
	}
	return resp.StatusCode, answer.Message
}

func without(h http.Header, names ...string) http.Header {
	h = h.Clone()
	for _, n := range names {
		h.Del(n)
	}
	return h
}

// gitlabPushOf is a GitLab Push Hook payload that names repoURL: what
// anyone can send for any repository once GitLab's deliveries go unsigned.
func gitlabPushOf(t *testing.T, repoURL, before, after string, paths ...string) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"object_kind": "push", "ref": "refs/heads/main", "before": before, "after": after,
		"project":             map[string]any{"git_http_url": repoURL, "default_branch": "main"},
		"commits":             []map[string]any{{"id": after, "modified": paths}},
		"total_commits_count": 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestReceiverRefusesCrossProviderDeliveries: with GitHub signed and the
// other providers unsigned (--webhook-allow-unsigned), a delivery whose
// headers and body are not all one provider's is refused with 400 and
// signals nothing; a consistent unsigned one still goes through.
func TestReceiverRefusesCrossProviderDeliveries(t *testing.T) {
	f := newFakeRefresher(App{"shop", "https://github.com/acme/shop-config"},
		App{"payments", "https://gitlab.example.com/platform/deploy/payments"},
		App{"edge", "https://git.example.org/infra/edge-proxy"},
		App{"fleet", "https://bitbucket.org/acme-team/fleet-manifests"})
	r, _ := newTestReceiver(t, Options{Secrets: map[Provider]string{GitHub: testSecrets[GitHub]}, AllowUnsigned: true}, f)
	url := serve(t, r)
	gh, gl, gt, bb := fixture(t, "github-push.json"), fixture(t, "gitlab-push.json"), fixture(t, "gitea-push.json"), fixture(t, "bitbucket-push.json")
	minimalGH := []byte(`{"ref":"refs/heads/main","after":"4e2b8d6f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b",` +
		`"repository":{"clone_url":"https://github.com/Acme/Shop-Config.git","homepage":"https://github.com/Acme/Shop-Config.git"}}`)
	gitlab := func(event string) http.Header { return without(signed(GitLab, event, nil), "X-Gitlab-Token") }
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		want   string
	}{
		{"a GitHub push on GitLab's event header", gitlab("Push Hook"), gh,
			`field "forced" of a github payload, but the headers name gitlab (X-Gitlab-Event)`},
		{"a GitHub-shaped body without GitHub's fields, on GitLab's header", gitlab("Push Hook"), minimalGH,
			`object_kind is "", and a GitLab Push Hook has "push"`},
		{"a GitLab tag push sent as a Push Hook", gitlab("Push Hook"), fixture(t, "gitlab-tag-push.json"),
			`object_kind is "tag_push", and a GitLab Push Hook has "push"`},
		{"a GitLab push on Bitbucket's event header", http.Header{"X-Event-Key": {"repo:push"}}, gl,
			`field "object_kind" of a gitlab payload, but the headers name bitbucket (X-Event-Key)`},
		{"a Bitbucket push on Gitea's event header", with(without(signed(Gitea, "push", nil), "X-Gitea-Signature")), bb,
			`field "push" of a bitbucket payload, but the headers name gitea (X-Gitea-Event)`},
		{"GitHub's and GitLab's event headers", with(gitlab("Push Hook"), "X-GitHub-Event", "push"), gl,
			"has github's event header X-GitHub-Event and gitlab's header X-Gitlab-Event"},
		{"a signed GitHub push carrying a GitLab token", with(signed(GitHub, "push", gh), "X-Gitlab-Token", "x"), gh,
			"has github's event header X-GitHub-Event and gitlab's header X-Gitlab-Token"},
		{"a GitLab push carrying a GitHub signature", with(gitlab("Push Hook"), "X-Hub-Signature-256", "sha256="+Sign("x", gl)), gl,
			"header X-Hub-Signature-256"},
		{"Gitea's event headers disagree", with(without(signed(Gitea, "push", nil), "X-Gitea-Signature"), "X-GitHub-Event", "issues"), gt,
			`X-Gitea-Event "push" and X-GitHub-Event "issues" disagree`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := post(t, url, tt.header, tt.body)
			if code != http.StatusBadRequest || !strings.Contains(msg, tt.want) {
				t.Fatalf("%d %q, want 400 with %q", code, msg, tt.want)
			}
		})
	}
	// A consistent unsigned delivery is taken; the pool handles deliveries
	// in order, so once it is signalled the refused ones would have been.
	if code, msg := post(t, url, gitlab("Push Hook"), gl); code != http.StatusAccepted {
		t.Fatalf("unsigned GitLab push: %d %s", code, msg)
	}
	waitFor(t, func() bool { return f.count("payments") == 1 })
	if f.total() != 1 {
		t.Fatalf("refused deliveries signalled: %v", f.refreshed)
	}
	// Gitea's own copies of its headers stay accepted.
	if code, msg := post(t, url, without(signed(Gitea, "push", gt), "X-Gitea-Signature"), gt); code != http.StatusAccepted {
		t.Fatalf("unsigned Gitea push with X-GitHub-Event: %d %s", code, msg)
	}
	waitFor(t, func() bool { return f.count("edge") == 1 })
}

// TestReceiverUnsignedPushCarriesNoPaths: an unsigned push (here a GitLab
// payload naming the GitHub repository, which anyone may send when GitLab
// is unsigned) claims that only docs/ changed: the app is signalled without
// that list, so it renders the new revision whatever its
// manifest-generate-paths say. The genuine, signed GitHub delivery of the
// same push is not taken for a repeat of the forged one, and keeps its list.
func TestReceiverUnsignedPushCarriesNoPaths(t *testing.T) {
	f := newFakeRefresher(App{"shop", "https://github.com/acme/shop-config"})
	r, _ := newTestReceiver(t, Options{Secrets: map[Provider]string{GitHub: testSecrets[GitHub]}, AllowUnsigned: true}, f)
	url := serve(t, r)
	const before, after = "9a7f3c1e0b4d2a6f8e5c3b1a0d9e8f7c6b5a4d3e", "4e2b8d6f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b"
	forged := gitlabPushOf(t, "https://github.com/Acme/Shop-Config.git", before, after, "docs/README.md")
	if code, msg := post(t, url, without(signed(GitLab, "Push Hook", nil), "X-Gitlab-Token"), forged); code != http.StatusAccepted {
		t.Fatalf("unsigned push: %d %s", code, msg)
	}
	waitFor(t, func() bool { return f.count("shop") == 1 })
	gh := fixture(t, "github-push.json")
	if code, msg := post(t, url, signed(GitHub, "push", gh), gh); code != http.StatusAccepted || strings.Contains(msg, "already delivered") {
		t.Fatalf("signed push after the unsigned one: %d %s", code, msg)
	}
	waitFor(t, func() bool { return f.count("shop") == 2 })
	f.mu.Lock()
	got := f.refreshed["shop"]
	f.mu.Unlock()
	if got[0].After != after || got[0].Paths != nil {
		t.Errorf("unsigned push signalled as after %s with paths %q, want after %s and no paths", got[0].After, got[0].Paths, after)
	}
	want := []string{"apps/cart/old-notes.md", "apps/cart/pdb.yaml", "apps/checkout/deployment.yaml"}
	if diff := cmp.Diff(want, got[1].Paths); diff != "" {
		t.Errorf("signed push's paths (-want +got)\n%s", diff)
	}
}
