package sandbox

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/egress"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestPluginEgressThroughTheSandbox: a plugin whose operator listed a
// host fetches from it through the worker's egress proxy, from inside
// each sandbox, which has no network of its own; a host off its list is
// refused, the render's error naming it and the flag, and the host
// receives nothing; a plugin without a list gets no proxy at all.
func TestPluginEgressThroughTheSandbox(t *testing.T) {
	if _, err := os.Stat("/usr/bin/curl"); err != nil {
		t.Skip("no curl on this machine for the plugin to fetch with")
	}
	var allowedHits, otherHits atomic.Int64
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		_, _ = io.WriteString(w, "values-from-"+r.URL.Path[1:])
	}))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	host := func(s *httptest.Server) string { return s.Listener.Addr().String() }

	// Both listen on loopback, which the host policy lists as a stack's
	// own services are listed: only the plugin's list tells them apart.
	hosts, err := netpolicy.ParseHosts([]string{host(allowed), host(other)}, "--render-allow-hosts")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := egress.ParseRules([]string{"fetch=" + host(allowed)}, hosts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plugin, err := os.ReadFile("../egress/testdata/fetch-plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fetch.yaml"), plugin, 0o644); err != nil {
		t.Fatal(err)
	}
	plugins, err := render.LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := pluginRepo(t)
	src := func(plugin, u string) app.Source {
		return app.Source{Path: "app", Plugin: &app.PluginSource{Name: plugin, Parameters: []app.PluginParameter{{Name: "url", String: &u}}}}
	}
	opts := render.Options{AppName: "fetcher", Namespace: "prod"}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := testRenderer(t, r, Limits{})
		sr.Settings.Plugins, sr.PluginDir, sr.Egress = plugins, dir, rules

		res, err := sr.Render(context.Background(), root, src("fetch", allowed.URL+"/prod"), opts)
		if err != nil {
			t.Fatalf("fetch from a listed host: %v", err)
		}
		data, _, _ := unstructuredStrings(res.Objects[0].Object, "data")
		if data["body"] != "values-from-prod" {
			t.Errorf("fetched %q, want values-from-prod", data["body"])
		}

		_, err = sr.Render(context.Background(), root, src("fetch", other.URL+"/x"), opts)
		want := host(other) + " is not on plugin fetch's egress list (" + host(allowed) + "): an operator who trusts it adds it with ferry-worker --plugin-egress fetch="
		if err == nil || !strings.Contains(err.Error(), want) || !render.IsUserError(err) {
			t.Errorf("fetch from a host off the list: %v; want a user error containing %q", err, want)
		}
		if otherHits.Load() != 0 {
			t.Errorf("the host off the list received %d requests", otherHits.Load())
		}

		// The same plugin without a list: no proxy, no network.
		sr.Egress = nil
		_, err = sr.Render(context.Background(), root, src("fetch", allowed.URL+"/none"), opts)
		if err == nil || !strings.Contains(err.Error(), "status 4") {
			t.Errorf("a plugin without a list reached the network: %v", err)
		}
	})
	if allowedHits.Load() == 0 {
		t.Error("the listed host received nothing")
	}
}
