package manifests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// dirRepos checks out (repo, sha) as the directory the test wrote for it.
type dirRepos map[string]string

func (d dirRepos) Checkout(_ context.Context, repo, sha string) (string, func(), error) {
	dir, ok := d[repo+"@"+sha]
	if !ok {
		return "", nil, os.ErrNotExist
	}
	return dir, func() {}, nil
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const (
	chartRepo  = "https://git.example.com/org/charts.git"
	valuesRepo = "https://git.example.com/org/values.git"
	shaA       = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB       = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC       = "cccccccccccccccccccccccccccccccccccccccc"
)

// TestLoadSources: a chart takes its values from another source's
// $values/envs/prod.yaml; a new commit of the values repository alone gives
// another set; a third source's objects are put with the chart's, and an
// object two sources render is an error naming both.
func TestLoadSources(t *testing.T) {
	chart := writeTree(t, map[string]string{
		"web/Chart.yaml":           "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"web/values.yaml":          "replicas: 1\n",
		"web/templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-web\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
		"extra/service.yaml":       "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports: [{port: 80}]\n",
		"dup/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-web\n",
		"web/templates/_empty.tpl": "",
	})
	values1 := writeTree(t, map[string]string{"envs/prod.yaml": "replicas: 3\n"})
	values2 := writeTree(t, map[string]string{"envs/prod.yaml": "replicas: 5\n"})
	repos := dirRepos{chartRepo + "@" + shaA: chart, valuesRepo + "@" + shaB: values1, valuesRepo + "@" + shaC: values2}
	cache := NewMemory(0, time.Hour)
	l := &Loader{Repos: repos, Cache: cache}

	sources := func(valuesSHA string, third string) []SourceAt {
		s := []SourceAt{
			{Source: app.Source{RepoURL: chartRepo, Path: "web", Helm: &app.HelmSource{ValueFiles: []string{"$values/envs/prod.yaml"}}}, Revision: shaA},
			{Source: app.Source{RepoURL: valuesRepo, Ref: "values"}, Revision: valuesSHA},
		}
		if third != "" {
			s = append(s, SourceAt{Source: app.Source{RepoURL: chartRepo, Path: third}, Revision: shaA})
		}
		return s
	}
	load := func(s []SourceAt) (*Loaded, error) {
		return l.LoadSources(context.Background(), SourcesRequest{Sources: s, App: "shop", Namespace: "shop"})
	}
	first, err := load(sources(shaB, "extra"))
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(first.Objects); got != "Service/web ConfigMap/shop-web" && got != "ConfigMap/shop-web Service/web" {
		t.Fatalf("objects %q", got)
	}
	if got := data(first, "shop-web"); got != "3" {
		t.Errorf("replicas from $values/envs/prod.yaml = %q, want 3", got)
	}
	again, err := load(sources(shaB, "extra"))
	if err != nil || !again.CacheHit || again.Digest != first.Digest {
		t.Fatalf("again: %v hit=%v", err, again != nil && again.CacheHit)
	}
	moved, err := load(sources(shaC, "extra"))
	if err != nil {
		t.Fatal(err)
	}
	if moved.CacheHit || moved.Digest == first.Digest || data(moved, "shop-web") != "5" {
		t.Errorf("values commit moved: hit=%v, same digest %v, replicas %q", moved.CacheHit, moved.Digest == first.Digest, data(moved, "shop-web"))
	}

	_, err = load(sources(shaB, "dup"))
	if err == nil || !render.IsUserError(err) || !strings.Contains(err.Error(), "spec.sources[0]") || !strings.Contains(err.Error(), "spec.sources[2]") ||
		!strings.Contains(err.Error(), "ConfigMap shop-web") {
		t.Errorf("duplicate object: %v", err)
	}

	// A value file missing from the ref's commit fails the render by name,
	// unless ignoreMissingValueFiles.
	missing := sources(shaB, "")
	missing[0].Source.Helm = &app.HelmSource{ValueFiles: []string{"$values/envs/staging.yaml"}}
	if _, err := load(missing); err == nil || !strings.Contains(err.Error(), "$values/envs/staging.yaml") {
		t.Errorf("missing ref file: %v", err)
	}
	missing[0].Source.Helm.IgnoreMissingValueFiles = true
	if got, err := load(missing); err != nil || data(got, "shop-web") != "1" {
		t.Errorf("missing ref file ignored: %v", err)
	}
	// A path out of the ref's repository is refused.
	missing[0].Source.Helm = &app.HelmSource{ValueFiles: []string{"$values/../secrets.yaml"}}
	if _, err := load(missing); err == nil || !strings.Contains(err.Error(), "leaves the repository") {
		t.Errorf("ref file out of the repository: %v", err)
	}
}

func data(l *Loaded, name string) string {
	for _, o := range l.Objects {
		if o.GetName() == name {
			v, _ := o.Object["data"].(map[string]any)["replicas"].(string)
			return v
		}
	}
	return ""
}
