package render

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
)

// gitFetch fetches remote bases with gitsource, as the worker does.
func gitFetch(t *testing.T) FetchFunc {
	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, ref RemoteRef) (RemoteBase, error) {
		sha, err := repos.Resolve(ctx, ref.Repo, ref.Ref)
		if err != nil {
			return RemoteBase{}, err
		}
		dir, release, err := repos.Checkout(ctx, ref.Repo, sha)
		if err != nil {
			return RemoteBase{}, err
		}
		t.Cleanup(release)
		return RemoteBase{Repo: ref.Repo, Ref: ref.Ref, SHA: sha, Dir: dir}, nil
	}
}

// renderRemote fetches the source's remote bases and renders it, as the
// worker does.
func renderRemote(t *testing.T, r *Renderer, root string, src app.Source) (*Result, []RemoteBase, error) {
	bases, err := r.FetchRemoteBases(context.Background(), root, src, Options{}, gitFetch(t))
	if err != nil {
		return nil, nil, err
	}
	res, err := r.Render(context.Background(), root, src, Options{RemoteBases: bases})
	return res, bases, err
}

// TestKustomizeRemoteBases: a base in another Git repository (served over
// HTTP here) is refused by default; when the worker allows remote bases
// the worker fetches it, and kustomize reads it from that checkout, which
// stays as it was fetched.
func TestKustomizeRemoteBases(t *testing.T) {
	s := gittest.NewServer(t)
	w := s.NewRepo(t, "bases")
	sha := w.Commit("base", map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote\n",
	})
	w.Push()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "namePrefix: app-\nresources:\n- "+s.URL("bases")+"//base?ref=main\n")

	_, err := Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertErr(t, err, "render app/kustomization.yaml: remote references (resources: \""+s.URL("bases")+"//base?ref=main\") are not allowed on this worker")
	if n := s.Listings(); n != 0 {
		t.Fatalf("the refused base was fetched %d times", n)
	}

	r := &Renderer{AllowRemoteBases: true}
	res, bases, err := renderRemote(t, r, root, app.Source{Path: "app"})
	if err != nil {
		t.Fatal(err)
	}
	assertNames(t, res.Objects, []string{"ConfigMap/app-remote"})
	if len(bases) != 1 || bases[0].Repo != s.URL("bases") || bases[0].Ref != "main" || bases[0].SHA != sha {
		t.Fatalf("fetched %+v, want %s at main = %s", bases, s.URL("bases"), sha)
	}
	data, err := os.ReadFile(filepath.Join(root, "app", "kustomization.yaml"))
	if err != nil || !strings.Contains(string(data), "//base?ref=main") {
		t.Fatalf("the checkout's kustomization changed: %q, %v", data, err)
	}

	// Without the fetched bases the render does not fetch them itself.
	listings := s.Listings()
	_, err = r.Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertErr(t, err, "was not fetched before the render")
	if n := s.Listings(); n != listings {
		t.Fatalf("the render listed the remote repository %d times", n-listings)
	}
}

// TestKustomizeRemoteBasesOfBases: a fetched base's own remote bases are
// followed (in every form of reference the tests can serve), each
// repository and ref fetched once, and a chain deeper than MaxRemoteDepth
// is refused.
func TestKustomizeRemoteBasesOfBases(t *testing.T) {
	s := gittest.NewServer(t)
	inner := s.NewRepo(t, "inner")
	inner.Commit("inner", map[string]string{
		"a/kustomization.yaml": "resources:\n- cm.yaml\n",
		"a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inner-a\n",
		"b/kustomization.yaml": "resources:\n- cm.yaml\n",
		"b/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inner-b\n",
	})
	inner.Git("tag", "v1")
	inner.Push()
	inner.Git("push", "origin", "v1")
	outer := s.NewRepo(t, "outer")
	outer.Commit("outer", map[string]string{
		"deploy/base/kustomization.yaml": "Resources:\n- cm.yaml\n- git::" + s.URL("inner") + "//a?version=v1\n",
		"deploy/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outer\n",
	})
	outer.Push()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "namePrefix: app-\nbases:\n- "+
		strings.TrimSuffix(s.URL("outer"), ".git")+".git/deploy/base\ncomponents: []\nresources:\n- "+s.URL("inner")+"//b?ref=v1\n")

	r := &Renderer{AllowRemoteBases: true}
	res, bases, err := renderRemote(t, r, root, app.Source{Path: "app"})
	if err != nil {
		t.Fatal(err)
	}
	// inner is named twice (by ?ref= and ?version=), and fetched once.
	if len(bases) != 2 || bases[0].Repo != s.URL("inner") || bases[0].Ref != "v1" || bases[1].Repo != s.URL("outer") {
		t.Fatalf("fetched %+v, want inner at v1 (resources), then outer (bases)", bases)
	}
	assertNames(t, res.Objects, []string{"ConfigMap/app-inner-b", "ConfigMap/app-outer", "ConfigMap/app-inner-a"})

	// A chain of remote bases deeper than the limit.
	chain := s.NewRepo(t, "chain")
	files := map[string]string{}
	for i := 0; i <= MaxRemoteDepth+1; i++ {
		files[filepathJoin("d", i, "kustomization.yaml")] = "resources:\n- " + s.URL("chain") + "//" + filepathJoin("d", i+1, "") + "\n"
	}
	chain.Commit("chain", files)
	chain.Push()
	writeFile(t, filepath.Join(root, "deep", "kustomization.yaml"), "resources:\n- "+s.URL("chain")+"//d/0\n")
	_, _, err = renderRemote(t, r, root, app.Source{Path: "deep"})
	assertErr(t, err, "more than 5 remote bases deep")
}

func filepathJoin(dir string, i int, file string) string {
	p := dir + "/" + string(rune('0'+i))
	if file != "" {
		p += "/" + file
	}
	return p
}

// TestKustomizeRemoteFilesRefused: a file given as an HTTP URL is never
// fetched, remote bases allowed or not.
func TestKustomizeRemoteFilesRefused(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n"))
	}))
	t.Cleanup(srv.Close)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "patch", "kustomization.yaml"), "resources:\n- cm.yaml\npatches:\n- path: "+srv.URL+"/patch.yaml\n")
	writeFile(t, filepath.Join(root, "patch", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n")
	writeFile(t, filepath.Join(root, "res", "kustomization.yaml"), "resources:\n- "+srv.URL+"/cm.yaml\n")
	r := &Renderer{AllowRemoteBases: true}
	_, _, err := renderRemote(t, r, root, app.Source{Path: "patch"})
	assertErr(t, err, "render patch/kustomization.yaml: remote files (patches.path: \""+srv.URL+"/patch.yaml\") are not fetched")
	_, _, err = renderRemote(t, r, root, app.Source{Path: "res"})
	assertErr(t, err, "render res/kustomization.yaml: resources: the remote reference (a plain HTTP file, which Ferry does not fetch, or a Git base) \""+srv.URL+"/cm.yaml\"")
	if n := hits.Load(); n != 0 {
		t.Fatalf("the HTTP server got %d requests", n)
	}
}

func TestParseRemoteRef(t *testing.T) {
	tests := []struct {
		in   string
		want RemoteRef
		err  string
	}{
		{in: "https://github.com/owner/repo//path/to?ref=v1", want: RemoteRef{Repo: "https://github.com/owner/repo", Path: "path/to", Ref: "v1"}},
		{in: "github.com/owner/repo/path?ref=v1&timeout=90", want: RemoteRef{Repo: "https://github.com/owner/repo", Path: "path", Ref: "v1", Timeout: 90e9}},
		{in: "git@github.com:owner/repo/path?version=main&timeout=2m", want: RemoteRef{Repo: "git@github.com:owner/repo", Path: "path", Ref: "main", Timeout: 120e9}},
		{in: "ssh://git@host.example/owner/repo.git//deploy?ref=abc1234&submodules=false", want: RemoteRef{Repo: "ssh://git@host.example/owner/repo.git", Path: "deploy", Ref: "abc1234"}},
		{in: "https://host.example/team/repo.git/deploy/base", want: RemoteRef{Repo: "https://host.example/team/repo.git", Path: "deploy/base"}},
		{in: "git::https://host.example/team/repo", want: RemoteRef{Repo: "https://host.example/team/repo"}},
		{in: "https://dev.azure.com/org/project/_git/repo/sub?ref=main", want: RemoteRef{Repo: "https://dev.azure.com/org/project/_git/repo", Path: "sub", Ref: "main"}},
		{in: "git@host.example:team/repo.git//x", want: RemoteRef{Repo: "git@host.example:team/repo.git", Path: "x"}},
		{in: "file:///var/lib/ferry/cache/repo", err: "file:// repository is on the worker's own disk"},
		{in: "https://user:secret@host.example/team/repo.git", err: "credentials written in a remote base URL are not used"},
		{in: "https://host.example/team/repo.git//../x", err: "climbs out of the repository"},
		{in: "https://host.example/file.yaml", err: "no repository in the URL"},
		{in: "https://host.example/team/repo?submodules=true", err: "does not fetch the submodules"},
	}
	for _, tc := range tests {
		got, err := ParseRemoteRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRemoteRef(%q) = %+v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRemoteRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}
