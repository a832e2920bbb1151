package render

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
)

// TestKustomizeRemoteBases: a base in another Git repository (served over
// HTTP here) is refused by default and cloned by kustomize when the
// worker allows remote bases.
func TestKustomizeRemoteBases(t *testing.T) {
	s := gittest.NewServer(t)
	w := s.NewRepo(t, "bases")
	w.Commit("base", map[string]string{
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
	res, err := r.Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertNames(t, res.Objects, []string{"ConfigMap/app-remote"})
}
