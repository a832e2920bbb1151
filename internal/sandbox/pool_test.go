package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// pooledRenderer is testRenderer with a pool of size sandboxes, closed
// when the test ends.
func pooledRenderer(t *testing.T, r Runner, size int) *Renderer {
	t.Helper()
	sr := testRenderer(t, r, Limits{})
	sr.Pool, sr.PoolDir = size, t.TempDir()
	t.Cleanup(func() { _ = sr.Close() })
	return sr
}

// waitFull waits until r's pool holds all its sandboxes, started and
// waiting: the renders that follow are warm ones.
func waitFull(t testing.TB, r *Renderer) *pool[*slot] {
	t.Helper()
	r.Warm()
	p := r.warmPool()
	deadline := time.Now().Add(3 * time.Minute)
	for p.idle() < r.Pool {
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d of %d sandboxes after 3 minutes", p.idle(), r.Pool)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// TestPoolRendersAsCold renders Argo CD's example apps, and sources that
// fail, in warm sandboxes of a pool and in sandboxes started for the
// render: the objects, source types and errors are the same.
func TestPoolRendersAsCold(t *testing.T) {
	root := corpusRoot(t)
	sources := []app.Source{
		{Path: "guestbook"},
		{Path: "helm-guestbook", Helm: &app.HelmSource{ValueFiles: []string{"values-production.yaml"}}},
		{Path: "kustomize-guestbook", Kustomize: &app.KustomizeSource{NamePrefix: "prod-"}},
		{Path: "sock-shop"},
		{Path: "no-such-app"},
		{Path: "helm-guestbook", Helm: &app.HelmSource{ValueFiles: []string{"../../etc/passwd"}}},
	}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		cold := testRenderer(t, r, Limits{})
		pooled := pooledRenderer(t, r, 2)
		for _, src := range sources {
			t.Run(src.Path, func(t *testing.T) {
				p := waitFull(t, pooled)
				warm := p.warm.Load()
				opts := render.Options{AppName: "a", Namespace: "demo"}
				want, wantErr := cold.Render(context.Background(), root, src, opts)
				got, err := pooled.Render(context.Background(), root, src, opts)
				if p.warm.Load() != warm+1 {
					t.Fatalf("the render did not use a warm sandbox (%d warm renders before, %d after)", warm, p.warm.Load())
				}
				if wantErr != nil || err != nil {
					if err == nil || wantErr == nil || err.Error() != wantErr.Error() || render.IsUserError(err) != render.IsUserError(wantErr) {
						t.Fatalf("pooled error %v, cold error %v", err, wantErr)
					}
					return
				}
				if got.SourceType != want.SourceType || len(got.Objects) != len(want.Objects) {
					t.Fatalf("pooled %s with %d objects, cold %s with %d", got.SourceType, len(got.Objects), want.SourceType, len(want.Objects))
				}
				for i := range want.Objects {
					if !reflect.DeepEqual(got.Objects[i].Object, want.Objects[i].Object) {
						t.Errorf("object %d differs:\npooled %#v\n  cold %#v", i, got.Objects[i].Object, want.Objects[i].Object)
					}
				}
			})
		}
	})
}

// tmpPlugin reports whether /tmp holds a file an earlier render left, and
// which files the checkout has; then it leaves such a file itself. A
// source of sleep.cm sleeps first.
const tmpPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: tmp
spec:
  generate:
    command: [sh, -c]
    args:
      - |
        test -f sleep.cm && sleep 60
        seen=absent; test -e /tmp/left-behind && seen=present
        echo secret > /tmp/left-behind
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tmp}\ndata: {tmp: %s, src: "%s"}\n' "$seen" "$(echo /src/*)"
  discover:
    fileName: "*.cm"
`

// tmpRepo is a checkout with the app directory app and the files named.
func tmpRepo(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, name := range append([]string{"app/x.cm"}, files...) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func tmpPluginRenderer(t *testing.T, r Runner, size int, timeout time.Duration) *Renderer {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp.yaml"), []byte(tmpPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	plugins, err := render.LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	sr := pooledRenderer(t, r, size)
	sr.Settings.Plugins, sr.PluginDir = plugins, dir
	sr.Settings.Limits.Timeout = timeout
	return sr
}

// renderTmp renders the tmp plugin's app from root, and returns its data.
func renderTmp(t *testing.T, r *Renderer, root string) map[string]string {
	t.Helper()
	res, err := r.Render(context.Background(), root, app.Source{Path: "app"}, render.Options{AppName: "tmp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 1 {
		t.Fatalf("%d objects, want the plugin's ConfigMap", len(res.Objects))
	}
	data, _, _ := unstructuredStrings(res.Objects[0].Object, "data")
	return data
}

// TestPoolRendersSeeNothingOfEachOther: a render in a pooled sandbox does
// not see the file an earlier render of the pool left in its /tmp, nor the
// earlier render's checkout; and its checkout stays as it was.
func TestPoolRendersSeeNothingOfEachOther(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := tmpPluginRenderer(t, r, 1, 0)
		first, second := tmpRepo(t, "first.txt"), tmpRepo(t, "second.txt")
		for i, want := range []map[string]string{
			{"tmp": "absent", "src": "/src/app /src/first.txt"},
			{"tmp": "absent", "src": "/src/app /src/second.txt"},
			{"tmp": "absent", "src": "/src/app /src/first.txt"},
		} {
			p := waitFull(t, sr)
			warm := p.warm.Load()
			root := map[bool]string{true: first, false: second}[i != 1]
			got := renderTmp(t, sr, root)
			if p.warm.Load() != warm+1 {
				t.Fatalf("render %d did not use a warm sandbox", i+1)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("render %d: %s = %q, want %q", i+1, k, got[k], v)
				}
			}
		}
		if entries, _ := os.ReadDir(filepath.Join(first, "app")); len(entries) != 1 {
			t.Errorf("the checkout's app directory has %d files after the renders, want its one", len(entries))
		}
	})
}

// TestPoolRefillsAfterATimeout: a render that outlives its time ends as
// the render time LimitError, one whose caller gives up ends with the
// caller's error; the pool destroys their sandboxes and fills up again, and
// the next render is a warm one that works.
func TestPoolRefillsAfterATimeout(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := tmpPluginRenderer(t, r, 2, 2*time.Second)
		slow := tmpRepo(t, "app/sleep.cm")
		p := waitFull(t, sr)
		_, err := sr.Render(context.Background(), slow, app.Source{Path: "app"}, render.Options{AppName: "slow"})
		var limit *render.LimitError
		if !errors.As(err, &limit) || limit.What != "render time" {
			t.Fatalf("err = %v, want a render time LimitError", err)
		}

		p = waitFull(t, sr)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = sr.Render(ctx, slow, app.Source{Path: "app"}, render.Options{AppName: "slow"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the caller's deadline", err)
		}

		p = waitFull(t, sr)
		if p.warm.Load() != 2 {
			t.Fatalf("%d warm renders, want the two slow ones", p.warm.Load())
		}
		if got := renderTmp(t, sr, tmpRepo(t)); got["tmp"] != "absent" {
			t.Errorf("a render after the timeouts: %v", got)
		}
		if p.warm.Load() != 3 {
			t.Errorf("the render after the timeouts was not a warm one")
		}
		waitDestroyed(t, sr, r)
	})
}

// waitDestroyed waits until r's sandboxes are only the pool's: gVisor
// containers and slots of renders that ended are gone.
func waitDestroyed(t *testing.T, sr *Renderer, r Runner) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		containers := -1
		if g, ok := r.(*gvisor); ok {
			out, err := exec.Command(g.runsc, "--root", g.root, "list", "-quiet").Output()
			if err != nil {
				t.Fatalf("runsc list: %v", err)
			}
			containers = len(strings.Fields(string(out)))
		}
		slots, _ := os.ReadDir(sr.PoolDir)
		idle := sr.warmPool().idle()
		if len(slots) == idle && (containers == -1 || containers == idle) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d slots and %d containers for %d pooled sandboxes a minute after the renders", len(slots), containers, idle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPoolCloseDestroysAll: closing a Renderer leaves nothing of its pool:
// no process, no gVisor container, no slot; a render afterwards fails with
// ErrClosed and starts nothing (a worker that stops must not leave one
// running: TestCloseEndsTheRendersUnderWay).
func TestPoolCloseDestroysAll(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := pooledRenderer(t, r, 2)
		p := waitFull(t, sr)
		if n := children(t); n < 2 {
			t.Fatalf("%d processes under the test with a full pool, want at least its 2 sandboxes", n)
		}
		if err := sr.Close(); err != nil {
			t.Fatal(err)
		}
		if n := children(t); n != 0 {
			t.Errorf("%d processes under the test after Close", n)
		}
		if p.idle() != 0 {
			t.Errorf("%d sandboxes in the pool after Close", p.idle())
		}
		waitDestroyed(t, sr, r)
		if _, err := sr.Render(context.Background(), corpusRoot(t), app.Source{Path: "guestbook"}, render.Options{AppName: "g"}); !errors.Is(err, ErrClosed) {
			t.Fatalf("a render after Close gave %v, want ErrClosed", err)
		}
		if n := children(t); n != 0 {
			t.Errorf("%d processes under the test after a render after Close", n)
		}
	})
}

// children counts the test process's child processes.
func children(t *testing.T) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	self, n := strconv.Itoa(os.Getpid()), 0
	for _, file := range stats {
		b, err := os.ReadFile(file)
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid …; comm may hold spaces.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == self {
			n++
		}
	}
	return n
}
