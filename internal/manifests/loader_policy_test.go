package manifests

import (
	"context"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestRemoteBaseOutsideTheProjectIsNeverFetched: on a real Git server, an
// app of project team-a (sourceRepos: its own repository) whose
// kustomization names a base in another repository. The load fails naming
// the base, the kustomization and sourceRepos, and the base's repository
// is neither listed nor fetched. Once an app of the default project has
// rendered the same source (so the cache holds it), team-a's app still
// gets the refusal, not the set, and still lists nothing.
func TestRemoteBaseOutsideTheProjectIsNeverFetched(t *testing.T) {
	s := gittest.NewServer(t)
	base := s.NewRepo(t, "base")
	base.Commit("base", map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n",
	})
	base.Push()
	appRepo := s.NewRepo(t, "app")
	sha := appRepo.Commit("app", map[string]string{"app/kustomization.yaml": "resources:\n- " + s.URL("base") + "//base\n"})
	appRepo.Push()

	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir(), RefsTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := &Loader{Repos: repos, Cache: NewMemory(64<<20, 0), Renderer: &render.Renderer{AllowRemoteBases: true}}
	teamA := &app.AppProject{Metadata: app.ObjectMeta{Name: "team-a"}, Spec: app.ProjectSpec{SourceRepos: []string{s.URL("app")}}}
	req := Request{RepoURL: s.URL("app"), SHA: sha, Source: app.Source{RepoURL: s.URL("app"), Path: "app"}, App: "shop",
		RepoCheck: teamA.RepoCheck("shop")}
	refused := func(when string) {
		t.Helper()
		_, err := l.LoadApp(context.Background(), req)
		for _, want := range []string{
			`app/kustomization.yaml: resources: fetch the remote base "` + s.URL("base") + `//base"`,
			"names " + s.URL("base") + "//base, which is not fetched",
			`app "shop": project "team-a" does not allow this repository (sourceRepos)`,
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: load: %v; want an error containing %q", when, err, want)
			}
		}
		if !netpolicy.IsDenied(err) {
			t.Fatalf("%s: %v is not a refusal", when, err)
		}
		if n, f := repos.LsRemoteCalls(s.URL("base")), repos.FetchCalls(s.URL("base")); n != 0 || f != 0 {
			t.Fatalf("%s: the base's repository was listed %d and fetched %d times", when, n, f)
		}
	}
	refused("first load")

	// The default project's app renders the same source: allowed, cached.
	other := req
	other.App, other.RepoCheck = "other", app.DefaultAppProject().RepoCheck("other")
	if _, err := l.LoadApp(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	listed := repos.LsRemoteCalls(s.URL("base"))
	_, err = l.LoadApp(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), `project "team-a" does not allow this repository (sourceRepos)`) {
		t.Fatalf("team-a's app after the set was cached: %v", err)
	}
	if n := repos.LsRemoteCalls(s.URL("base")); n != listed {
		t.Fatalf("team-a's load listed the base's repository (%d listings, %d before)", n, listed)
	}
}
