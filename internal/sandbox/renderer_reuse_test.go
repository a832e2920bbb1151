package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// sharedCount is how many sandboxes wait for their checkout's next render.
func sharedCount(r *Renderer) int {
	r.shares.mu.Lock()
	defer r.shares.mu.Unlock()
	return r.shares.count
}

// TestSharedSandboxRendersItsCheckoutAgain renders Argo CD's example apps
// (a directory, Helm, Kustomize, Jsonnet, the same path twice) one after
// another from one checkout with sharing on: one sandbox of the pool
// serves them all, and each render is the same as in a sandbox started
// for it. A failed render, another checkout and the idle time each end
// the sharing.
func TestSharedSandboxRendersItsCheckoutAgain(t *testing.T) {
	root := corpusRoot(t)
	sources := []app.Source{
		{Path: "guestbook"},
		{Path: "helm-guestbook", Helm: &app.HelmSource{ValueFiles: []string{"values-production.yaml"}}},
		{Path: "kustomize-guestbook", Kustomize: &app.KustomizeSource{NamePrefix: "prod-"}},
		{Path: "jsonnet-guestbook"},
		{Path: "guestbook"},
	}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		cold := testRenderer(t, r, Limits{})
		sr := pooledRenderer(t, r, 1)
		sr.Reuse = 10
		// Long enough that no wait between the renders below, however slow
		// the machine, lets a shared sandbox go before it is counted.
		sr.reuseIdle = 15 * time.Second
		p := waitFull(t, sr)
		opts := render.Options{AppName: "a", Namespace: "demo"}
		for i, src := range sources {
			want, err := cold.Render(context.Background(), root, src, opts)
			if err != nil {
				t.Fatalf("%s in a sandbox of its own: %v", src.Path, err)
			}
			got, err := sr.Render(context.Background(), root, src, opts)
			if err != nil {
				t.Fatalf("render %d, %s, in the shared sandbox: %v", i+1, src.Path, err)
			}
			if got.SourceType != want.SourceType || len(got.Objects) != len(want.Objects) {
				t.Fatalf("%s: shared %s with %d objects, alone %s with %d", src.Path, got.SourceType, len(got.Objects), want.SourceType, len(want.Objects))
			}
			for j := range want.Objects {
				if !reflect.DeepEqual(got.Objects[j].Object, want.Objects[j].Object) {
					t.Errorf("%s: object %d differs:\nshared %#v\n alone %#v", src.Path, j, got.Objects[j].Object, want.Objects[j].Object)
				}
			}
			if n := p.warm.Load() + p.cold.Load(); n != 1 {
				t.Fatalf("after render %d of the checkout, %d sandboxes of the pool served them, want 1", i+1, n)
			}
		}
		if sharedCount(sr) != 1 {
			t.Fatalf("%d sandboxes wait for the checkout, want 1", sharedCount(sr))
		}
		if c := sr.Counts(); c.Reused != int64(len(sources)-1) {
			t.Fatalf("counted %d renders served by a waiting sandbox, want %d", c.Reused, len(sources)-1)
		}

		// A render that fails ends the sharing: the next one takes a
		// sandbox of the pool again.
		if _, err := sr.Render(context.Background(), root, app.Source{Path: "no-such-app"}, opts); err == nil {
			t.Fatal("rendered a path that does not exist")
		}
		if sharedCount(sr) != 0 {
			t.Fatal("the sandbox of a failed render still waits for the checkout")
		}
		if c := sr.Counts(); c.Ended[EndFailed] != 1 {
			t.Fatalf("sandboxes ended by a failed render: counted %d, want 1", c.Ended[EndFailed])
		}
		waitFull(t, sr)
		if _, err := sr.Render(context.Background(), root, sources[0], opts); err != nil {
			t.Fatal(err)
		}
		if n := p.warm.Load() + p.cold.Load(); n != 2 {
			t.Fatalf("%d sandboxes of the pool served the renders, want 2 (one before the failure, one after)", n)
		}

		// Another checkout never sees this one's sandbox.
		other := t.TempDir()
		copyTree(t, filepath.Join(root, "guestbook"), filepath.Join(other, "guestbook"))
		waitFull(t, sr)
		if _, err := sr.Render(context.Background(), other, sources[0], opts); err != nil {
			t.Fatal(err)
		}
		if n := p.warm.Load() + p.cold.Load(); n != 3 {
			t.Fatalf("%d sandboxes of the pool served the renders, want 3: another checkout takes one of its own", n)
		}
		if sharedCount(sr) != 2 {
			t.Fatalf("%d sandboxes wait, want 2 (one per checkout)", sharedCount(sr))
		}

		// Without renders, they go.
		deadline := time.Now().Add(sr.reuseIdle + 10*time.Second)
		for sharedCount(sr) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d shared sandboxes still wait %s after their last render", sharedCount(sr), sr.reuseIdle+10*time.Second)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c := sr.Counts()
		if c.Ended[EndIdle] != 2 {
			t.Errorf("sandboxes ended idle: counted %d, want 2", c.Ended[EndIdle])
		}
		// Three sandboxes of the pool served renders, and it refilled.
		if c.Started < 3 {
			t.Errorf("counted %d sandboxes started, want at least the 3 that rendered", c.Started)
		}
	})
}

// TestSharedSandboxMemoryLimit: a render that needs more memory than the
// sandbox has, in a sandbox that rendered its checkout before, ends as the
// memory LimitError; the next render of the checkout works, in a new
// sandbox.
func TestSharedSandboxMemoryLimit(t *testing.T) {
	root := t.TempDir()
	copyTree(t, filepath.Join(corpusRoot(t), "guestbook"), filepath.Join(root, "guestbook"))
	writeFiles(t, filepath.Join(root, "bomb"), doublingChart)
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := testRenderer(t, r, Limits{Memory: 256 << 20})
		sr.Pool, sr.PoolDir, sr.Reuse = 1, t.TempDir(), 10
		p := waitFull(t, sr)
		guestbook := app.Source{Path: "guestbook"}
		if _, err := sr.Render(context.Background(), root, guestbook, render.Options{AppName: "g"}); err != nil {
			t.Fatal(err)
		}
		_, err := sr.Render(context.Background(), root, app.Source{Path: "bomb"}, render.Options{AppName: "bomb"})
		var limit *render.LimitError
		if !errors.As(err, &limit) || limit.What != "memory" {
			t.Fatalf("err = %v, want a memory LimitError", err)
		}
		if sharedCount(sr) != 0 {
			t.Fatal("the sandbox that ran out of memory still waits for the checkout")
		}
		if _, err := sr.Render(context.Background(), root, guestbook, render.Options{AppName: "g"}); err != nil {
			t.Fatalf("a render after the bomb: %v", err)
		}
		if n := p.warm.Load() + p.cold.Load(); n != 2 {
			t.Fatalf("%d sandboxes of the pool served the renders, want 2", n)
		}
	})
}

// copyTree copies the regular files and directories under from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPluginRendersShareNoSandbox: with sharing on, a plugin's renders of
// one checkout still each get a sandbox of their own: none sees the file
// the one before it left in /tmp.
func TestPluginRendersShareNoSandbox(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := tmpPluginRenderer(t, r, 1, 0)
		sr.Reuse = 10
		root := tmpRepo(t)
		for i := range 3 {
			p := waitFull(t, sr)
			warm := p.warm.Load()
			if got := renderTmp(t, sr, root); got["tmp"] != "absent" {
				t.Fatalf("render %d saw the file an earlier render left in /tmp", i+1)
			}
			if p.warm.Load() != warm+1 {
				t.Fatalf("render %d did not take a sandbox of the pool", i+1)
			}
			if sharedCount(sr) != 0 {
				t.Fatalf("after render %d a plugin's sandbox waits for the checkout", i+1)
			}
		}
	})
}

// TestCheckoutRendersWaitForItsSandbox: renders of one checkout that come
// at once, beyond perCheckout (1 here), wait for its sandbox rather than
// start more: one sandbox of the pool serves them all, each with its own
// answer. When more sandboxes would wait than may, the one that waited
// longest goes, not the one that just rendered.
func TestCheckoutRendersWaitForItsSandbox(t *testing.T) {
	root := corpusRoot(t)
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := pooledRenderer(t, r, 1)
		sr.Reuse, sr.checkoutRenders, sr.reuseIdle = 10, 1, time.Minute
		p := waitFull(t, sr)
		paths := []string{"guestbook", "kustomize-guestbook", "helm-guestbook", "jsonnet-guestbook"}
		cold := testRenderer(t, r, Limits{})
		want := map[string]int{}
		for _, path := range paths {
			res, err := cold.Render(context.Background(), root, app.Source{Path: path}, render.Options{AppName: path, Namespace: "demo"})
			if err != nil {
				t.Fatal(err)
			}
			want[path] = len(res.Objects)
		}
		errs := make(chan error, len(paths))
		for _, path := range paths {
			go func() {
				res, err := sr.Render(context.Background(), root, app.Source{Path: path}, render.Options{AppName: path, Namespace: "demo"})
				if err == nil && len(res.Objects) != want[path] {
					err = fmt.Errorf("%s: %d objects, alone %d", path, len(res.Objects), want[path])
				}
				errs <- err
			}()
		}
		for range paths {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if n := p.warm.Load() + p.cold.Load(); n != 1 {
			t.Fatalf("%d sandboxes of the pool served %d renders of one checkout that came at once, want 1", n, len(paths))
		}
		if c := sr.Counts(); c.Reused != int64(len(paths)-1) {
			t.Fatalf("counted %d renders served by the waiting sandbox, want %d", c.Reused, len(paths)-1)
		}

		// Pool 1: two sandboxes may wait. A third checkout's sandbox takes
		// the place of the first's, which waited longest.
		others := []string{t.TempDir(), t.TempDir()}
		for _, dir := range others {
			copyTree(t, filepath.Join(root, "guestbook"), filepath.Join(dir, "guestbook"))
			waitFull(t, sr)
			if _, err := sr.Render(context.Background(), dir, app.Source{Path: "guestbook"}, render.Options{AppName: "g"}); err != nil {
				t.Fatal(err)
			}
		}
		if sharedCount(sr) != 2 {
			t.Fatalf("%d sandboxes wait, want 2", sharedCount(sr))
		}
		if c := sr.Counts(); c.Ended[EndFull] != 1 {
			t.Fatalf("sandboxes that gave their place: counted %d, want 1", c.Ended[EndFull])
		}
		served := p.warm.Load() + p.cold.Load()
		for _, dir := range others {
			if _, err := sr.Render(context.Background(), dir, app.Source{Path: "guestbook"}, render.Options{AppName: "g"}); err != nil {
				t.Fatal(err)
			}
		}
		if n := p.warm.Load() + p.cold.Load(); n != served {
			t.Fatalf("the last two checkouts' renders took %d sandboxes of the pool, want none: theirs still wait", n-served)
		}
	})
}
