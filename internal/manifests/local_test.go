package manifests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/localtree"
)

// TestLoadLocalTree: a tree the CLI put renders with the app's source
// options and no checkout, under a key of its own (the commit's set is
// another), encrypted in the cache; a tree missing, or put under another
// secret, is a LocalTreeError.
func TestLoadLocalTree(t *testing.T) {
	ctx := context.Background()
	cache := NewMemory(0, time.Hour)
	l, repos, _ := newTestLoader(cache)
	l.Sealer, _ = mustSealer(t, "0123456789abcdef-local")

	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	must(t, os.MkdirAll(app, 0o755))
	must(t, os.WriteFile(filepath.Join(app, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\ndata: {password: hunter2}\n"), 0o644))
	tree, err := localtree.Pack(dir, app)
	must(t, err)
	must(t, PutLocal(ctx, cache, l.Sealer, tree))
	if raw, _ := cache.Get(ctx, localKey(tree.Digest)); strings.Contains(string(raw), "hunter2") {
		t.Fatal("the local tree is in the cache in clear")
	}

	src := appSource
	src.Path = tree.Path
	got, err := l.LoadApp(ctx, Request{RepoURL: testRepo, Source: src, App: "web", Local: tree.Digest})
	must(t, err)
	if k := kinds(got.Objects); k != "ConfigMap/local" {
		t.Fatalf("rendered %s, want the local tree's ConfigMap/local", k)
	}
	if repos.checkouts.Load() != 0 {
		t.Fatal("a local tree was checked out from Git")
	}
	fromGit, err := l.LoadApp(ctx, Request{RepoURL: testRepo, SHA: testSHA, Source: appSource, App: "web"})
	must(t, err)
	if fromGit.Digest == got.Digest {
		t.Fatal("the commit's set is the local tree's")
	}

	_, err = l.LoadApp(ctx, Request{RepoURL: testRepo, Source: src, App: "web", Local: localtree.Digest([]byte("other"))})
	if !IsLocalTree(err) || !strings.Contains(err.Error(), "sync again with ferry app sync --local") {
		t.Fatalf("a tree not in the cache: %v", err)
	}
	stranger, _ := mustSealer(t, "another-secret-of-16")
	must(t, PutLocal(ctx, cache, stranger, &localtree.Tree{Archive: []byte("x"), Digest: localtree.Digest([]byte("x"))}))
	_, err = l.LoadApp(ctx, Request{RepoURL: testRepo, Source: src, App: "web", Local: localtree.Digest([]byte("x"))})
	if !IsLocalTree(err) || !strings.Contains(err.Error(), EnvCacheKey) {
		t.Fatalf("a tree sealed with another secret: %v", err)
	}
	if err := PutLocal(ctx, nil, nil, tree); err == nil || !strings.Contains(err.Error(), EnvCacheKey) {
		t.Fatalf("no cache: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
