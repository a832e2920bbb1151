package manifests

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// valuesServer serves one values file whose content a test changes.
type valuesServer struct {
	*httptest.Server
	mu     sync.Mutex
	body   string
	status int
	hits   atomic.Int64
}

func newValuesServer(t *testing.T, body string) *valuesServer {
	v := &valuesServer{body: body, status: http.StatusOK}
	v.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.hits.Add(1)
		v.mu.Lock()
		defer v.mu.Unlock()
		w.WriteHeader(v.status)
		_, _ = w.Write([]byte(v.body))
	}))
	t.Cleanup(v.Close)
	return v
}

func (v *valuesServer) set(status int, body string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.status, v.body = status, body
}

// TestValueFileFromURL: a chart in Git with a values file served over
// HTTP by a server the host policy lists. The set has its values; a
// changed file renders again at the next load (its digest is in the key),
// an unchanged one answers from the cache; the set counts as remote. A
// failing server is an error naming the app, the field, the URL and the
// status, never the body; a host the policy refuses is never asked, and
// the error names the app, the field, the host and the flag.
func TestValueFileFromURL(t *testing.T) {
	values := newValuesServer(t, "greeting: from-the-url\n")
	s := gittest.NewServer(t)
	repo := s.NewRepo(t, "chart")
	sha := repo.Commit("chart", map[string]string{
		"chart/Chart.yaml":           "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"chart/values.yaml":          "greeting: from-the-chart\n",
		"chart/templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\ndata:\n  greeting: {{ .Values.greeting }}\n",
		"chart/values-override.yaml": "other: x\n",
	})
	repo.Push()
	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir(), RefsTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := netpolicy.ParseHosts([]string{values.Listener.Addr().String()}, "--render-allow-hosts")
	if err != nil {
		t.Fatal(err)
	}
	l := &Loader{Repos: repos, Cache: NewMemory(64<<20, 0), Renderer: &render.Renderer{},
		ValueFiles: &HTTPValueFiles{Hosts: hosts, MaxBytes: 1 << 10}}
	src := app.Source{RepoURL: s.URL("chart"), Path: "chart", Helm: &app.HelmSource{ValueFiles: []string{"values-override.yaml", values.URL + "/values.yaml"}}}
	req := Request{RepoURL: s.URL("chart"), SHA: sha, Source: src, App: "web", Namespace: "prod"}
	greeting := func(when string) (*Loaded, string) {
		t.Helper()
		loaded, err := l.LoadApp(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		data, _, _ := unstructuredMap(loaded.Objects[0].Object, "data")
		return loaded, data["greeting"]
	}

	loaded, got := greeting("first load")
	if got != "from-the-url" || loaded.CacheHit {
		t.Fatalf("first load: greeting %q (cache hit %v), want from-the-url rendered", got, loaded.CacheHit)
	}
	if loaded.RemoteBases != 1 {
		t.Errorf("RemoteBases = %d, want 1: the set depends on a file outside the commit", loaded.RemoteBases)
	}
	if loaded, _ = greeting("unchanged"); !loaded.CacheHit {
		t.Error("an unchanged file rendered again")
	}
	values.set(http.StatusOK, "greeting: changed\n")
	if loaded, got = greeting("changed"); got != "changed" || loaded.CacheHit {
		t.Errorf("after the file changed: greeting %q (cache hit %v), want changed, rendered", got, loaded.CacheHit)
	}

	values.set(http.StatusForbidden, "secret-body-never-shown")
	_, err = l.LoadApp(context.Background(), req)
	want := `app "web" spec.source.helm.valueFiles[1]: fetch ` + values.URL + "/values.yaml: the server answered 403 Forbidden"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret-body") {
		t.Errorf("a failing server: %v; want %q and no body", err, want)
	}
	values.set(http.StatusOK, strings.Repeat("a: b\n", 300))
	if _, err = l.LoadApp(context.Background(), req); err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("a file over the size limit: %v", err)
	}

	hits := values.hits.Load()
	for _, refused := range []struct{ url, what string }{
		{"http://10.0.0.5:8080/values.yaml", "10.0.0.5:8080 is a private address (RFC 1918)"},
		{"http://169.254.169.254/latest/user-data", "169.254.169.254 is the cloud metadata address"},
		// Listed with its port only: another port of the server is refused.
		{strings.Replace(values.URL, "127.0.0.1:", "127.0.0.1:1", 1) + "/v.yaml", "is a loopback address"},
	} {
		r := req
		r.Source.Helm = &app.HelmSource{ValueFiles: []string{refused.url}}
		_, err := l.LoadApp(context.Background(), r)
		for _, want := range []string{`app "web" spec.source.helm.valueFiles[0] names ` + refused.url, refused.what, "lists it in --render-allow-hosts"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want %q", refused.url, err, want)
			}
		}
		if !netpolicy.IsDenied(err) {
			t.Errorf("%s: %v is not a refusal", refused.url, err)
		}
	}
	if values.hits.Load() != hits {
		t.Error("a refused URL reached the server")
	}
}

func unstructuredMap(obj map[string]any, field string) (map[string]string, bool, error) {
	out := map[string]string{}
	m, ok := obj[field].(map[string]any)
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out, ok, nil
}
