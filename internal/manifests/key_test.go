package manifests

import (
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

func TestKey(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	base := Key("https://github.com/org/repo.git", sha, app.Source{Path: "app"}, "dir/1")
	if len(base) != 64 {
		t.Fatalf("Key = %q, want 64 hex digits", base)
	}
	same := []struct {
		name, url, sha string
		src            app.Source
	}{
		{"scp-like URL", "git@github.com:org/repo", sha, app.Source{Path: "app"}},
		{"trailing slash path", "https://github.com/org/repo", sha, app.Source{Path: "./app/"}},
		{"upper-case SHA", "https://github.com/org/repo", "0123456789ABCDEF0123456789ABCDEF01234567", app.Source{Path: "app"}},
		{"targetRevision ignored", "https://github.com/org/repo", sha, app.Source{Path: "app", TargetRevision: "main", RepoURL: "x"}},
	}
	for _, tc := range same {
		if got := Key(tc.url, tc.sha, tc.src, "dir/1"); got != base {
			t.Errorf("%s: key differs", tc.name)
		}
	}
	different := []struct {
		name, url, sha, version string
		src                     app.Source
	}{
		{"other repo", "https://github.com/org/other", sha, "dir/1", app.Source{Path: "app"}},
		{"other commit", "https://github.com/org/repo", "1123456789abcdef0123456789abcdef01234567", "dir/1", app.Source{Path: "app"}},
		{"other path", "https://github.com/org/repo", sha, "dir/1", app.Source{Path: "app2"}},
		{"recurse", "https://github.com/org/repo", sha, "dir/1", app.Source{Path: "app", Directory: &app.DirectorySource{Recurse: true}}},
		{"empty directory section", "https://github.com/org/repo", sha, "dir/1", app.Source{Path: "app", Directory: &app.DirectorySource{}}},
		{"include", "https://github.com/org/repo", sha, "dir/1", app.Source{Path: "app", Directory: &app.DirectorySource{Include: "*.yaml"}}},
		{"helm values", "https://github.com/org/repo", sha, "dir/1", app.Source{Path: "app", Helm: &app.HelmSource{ValuesObject: map[string]any{"a": 1}}}},
		{"renderer version", "https://github.com/org/repo", sha, "dir/2", app.Source{Path: "app"}},
	}
	seen := map[string]string{base: "base"}
	for _, tc := range different {
		got := Key(tc.url, tc.sha, tc.src, tc.version)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: same key as %s", tc.name, prev)
		}
		seen[got] = tc.name
	}
	// Map order never matters.
	a := Key("r", sha, app.Source{Helm: &app.HelmSource{ValuesObject: map[string]any{"a": 1, "b": map[string]any{"x": 1, "y": 2}}}}, "v")
	b := Key("r", sha, app.Source{Helm: &app.HelmSource{ValuesObject: map[string]any{"b": map[string]any{"y": 2, "x": 1}, "a": 1}}}, "v")
	if a != b {
		t.Error("helm valuesObject key order changes the key")
	}
}

func TestHelmKey(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	src := app.Source{Path: "chart"}
	k := func(src app.Source, name, ns string) string {
		return HelmKey("https://h/r.git", sha, src, "v", render.Options{AppName: name, Namespace: ns})
	}
	if k(src, "a", "x") == k(src, "b", "x") || k(src, "a", "x") == k(src, "a", "y") {
		t.Error("the release name or namespace does not change the key")
	}
	if k(src, "a", "x") == Key("https://h/r.git", sha, src, "v") {
		t.Error("HelmKey equals Key")
	}
	named := app.Source{Path: "chart", Helm: &app.HelmSource{ReleaseName: "r", Namespace: "n"}}
	if k(named, "a", "x") != k(named, "b", "y") {
		t.Error("an explicit release name and namespace do not make apps share the key")
	}
	// A parameter naming the build environment renders per app and per
	// source as written, whatever the release.
	env := func(target string) app.Source {
		return app.Source{Path: "chart", TargetRevision: target, Helm: &app.HelmSource{ReleaseName: "r", Namespace: "n",
			Parameters: []app.HelmParameter{{Name: "p", Value: "$ARGOCD_APP_NAME-$ARGOCD_APP_SOURCE_TARGET_REVISION"}}}}
	}
	if k(env("main"), "a", "x") == k(env("main"), "b", "x") || k(env("main"), "a", "x") == k(env("main"), "a", "y") {
		t.Error("the app's name or namespace does not change the key of a chart whose parameters name them")
	}
	if k(env("main"), "a", "x") == k(env("v1"), "a", "x") {
		t.Error("the targetRevision does not change the key of a chart whose parameters name it")
	}
	if k(env("main"), "a", "x") != k(env("main"), "a", "x") {
		t.Error("the key of a chart naming the build environment is not stable")
	}
}

func TestPluginKey(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	mint, sage := "mint", "sage"
	src := func(target string, flavor *string) app.Source {
		return app.Source{Path: "app", TargetRevision: target, Plugin: &app.PluginSource{Name: "p",
			Parameters: []app.PluginParameter{{Name: "flavor", String: flavor}}}}
	}
	opts := render.Options{AppName: "a", Namespace: "ns"}
	base := HelmKey("https://git.example.com/r.git", sha, src("main", &mint), "v", opts)
	for name, other := range map[string]string{
		"a parameter":        HelmKey("https://git.example.com/r.git", sha, src("main", &sage), "v", opts),
		"the targetRevision": HelmKey("https://git.example.com/r.git", sha, src("HEAD", &mint), "v", opts),
		"no plugin section":  HelmKey("https://git.example.com/r.git", sha, app.Source{Path: "app", TargetRevision: "main"}, "v", opts),
		"the app":            HelmKey("https://git.example.com/r.git", sha, src("main", &mint), "v", render.Options{AppName: "b", Namespace: "ns"}),
	} {
		if other == base {
			t.Errorf("a plugin source's key does not change with %s", name)
		}
	}
	if Key("https://git.example.com/r.git", sha, app.Source{Path: "app", TargetRevision: "main"}, "v") !=
		Key("https://git.example.com/r.git", sha, app.Source{Path: "app", TargetRevision: "HEAD"}, "v") {
		t.Error("the targetRevision changes the key of a source that is not a plugin's")
	}
}
