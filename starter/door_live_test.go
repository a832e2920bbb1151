package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// fakeServer logs the CLI in to a ferry-server that answers with routes
// (by path), and runs the CLI with args against it.
func fakeServer(t *testing.T, routes map[string]http.HandlerFunc) func(args ...string) (string, error) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.URL.Path]
		if !ok {
			http.Error(w, `{"message": "no such path"}`, http.StatusNotFound)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "config.json")
	t.Setenv("FERRY_CONFIG", path)
	cfg := &cliConfig{Current: "fake", Contexts: map[string]serverContext{"fake": {Server: srv.URL, Token: "t", Insecure: true}}}
	require.NoError(t, cfg.save(path))
	return func(args ...string) (string, error) {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		return out.String(), err
	}
}

func answer(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(v) }
}

func webView() *contract.View {
	v := &contract.View{Application: app.Application{Metadata: app.ObjectMeta{Name: "web"}}}
	v.Spec.Source = app.Source{RepoURL: "https://git.example/web.git"}
	v.Spec.Destinations = []app.Destination{{Name: "us-east-1", Namespace: "shop"}, {Name: "eu-west-1", Namespace: "shop"}}
	v.Status.Sync.Revision = "0123456789abcdef0123456789abcdef01234567"
	for _, region := range []string{"us-east-1", "eu-west-1"} {
		v.Status.Resources = append(v.Status.Resources,
			app.ResourceStatus{ResourceKey: app.ResourceKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Region: region},
			app.ResourceStatus{ResourceKey: app.ResourceKey{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}, Region: region})
	}
	return v
}

func TestDiffThroughTheServerPrintsTheModifiedResources(t *testing.T) {
	var asked string
	run := fakeServer(t, map[string]http.HandlerFunc{
		"/api/v1/applications/web": answer(webView()),
		"/api/v1/applications/web/managed-resources": func(w http.ResponseWriter, r *http.Request) {
			asked = r.URL.RawQuery
			answer(map[string]any{"items": []map[string]any{
				{"kind": "ConfigMap", "namespace": "shop", "name": "settings", "region": "us-east-1", "modified": true,
					"normalizedLiveState": `{"data":{"color":"red"}}`, "predictedLiveState": `{"data":{"color":"blue"}}`},
				{"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web", "region": "us-east-1",
					"normalizedLiveState": `{"spec":{}}`, "predictedLiveState": `{"spec":{}}`},
				{"kind": "ConfigMap", "namespace": "shop", "name": "extra", "region": "us-east-1", "modified": true, "message": "missing",
					"normalizedLiveState": "null", "predictedLiveState": `{"data":{"a":"b"}}`},
			}})(w, r)
		},
	})
	out, err := run("app", "diff", "web", "--region", "us-east-1")
	var exit exitError
	require.True(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, diffExitCode, exit.code)
	assert.Equal(t, "region=us-east-1", asked)
	assert.Equal(t, `app web at 01234567 (https://git.example/web.git)
===== us-east-1: ConfigMap shop/settings: differs at data.color
--- live/ConfigMap/shop/settings
+++ desired/ConfigMap/shop/settings
@@ -1,3 +1,3 @@
 data:
-  color: red
+  color: blue
 
===== us-east-1: ConfigMap shop/extra: missing
--- live/ConfigMap/shop/extra
+++ desired/ConfigMap/shop/extra
@@ -1 +1,3 @@
+data:
+  a: b
 
`, out)

	_, err = run("app", "diff", "web", "--revision", "main", "--resource-customizations", "argocd-cm.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--resource-customizations is read by ferry-server from argocd-cm when you are logged in: drop it")
	assert.Contains(t, err.Error(), "--revision is not sent when you are logged in")
}

func TestLogsThroughTheServerPrefixOnlyWithSeveralContainers(t *testing.T) {
	var lines []string
	var asked string
	run := fakeServer(t, map[string]http.HandlerFunc{
		"/api/v1/applications/web/logs": func(w http.ResponseWriter, r *http.Request) {
			asked = r.URL.Query().Encode()
			for _, l := range lines {
				fmt.Fprintln(w, l)
			}
		},
	})
	entry := func(pod, container, content string) string {
		return fmt.Sprintf(`{"result": {"content": %q, "podName": %q, "namespace": "shop", "containerName": %q, "region": "us-east-1"}}`, content, pod, container)
	}
	last := `{"result": {"last": true}}`

	lines = []string{entry("web-1", "nginx", "one"), entry("web-1", "nginx", "two"), last}
	out, err := run("app", "logs", "web", "--kind", "Deployment", "--name", "web", "--tail", "10", "--since", "90s")
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", out, "one container: bare lines")
	assert.Equal(t, "follow=false&kind=Deployment&previous=false&resourceName=web&sinceSeconds=90&tailLines=10", asked)

	lines = []string{entry("web-1", "nginx", "one"), entry("web-1", "nginx", "two"), entry("web-2", "nginx", "three"),
		`{"error": {"message": "region eu-west-1: unreachable"}}`, last}
	out, err = run("app", "logs", "web")
	require.ErrorContains(t, err, "region eu-west-1: unreachable")
	assert.Equal(t, "[us-east-1 shop/web-1 nginx] one\n[us-east-1 shop/web-1 nginx] two\n[us-east-1 shop/web-2 nginx] three\n", out)

	lines = []string{entry("web-1", "nginx", "one")}
	_, err = run("app", "logs", "web")
	require.ErrorContains(t, err, "ended the log stream before its last entry")

	_, err = run("app", "logs", "web", "--kubeconfig", "k")
	require.ErrorContains(t, err, "--kubeconfig is not read when you are logged in")
}

func TestResourcesAndActionsThroughTheServer(t *testing.T) {
	var ran []string
	run := fakeServer(t, map[string]http.HandlerFunc{
		"/api/v1/applications/web": answer(webView()),
		"/api/v1/applications/web/resource/actions": func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			answer(map[string]any{"actions": []map[string]any{{"name": "restart-" + q.Get("region") + "-" + q.Get("group")}}})(w, r)
		},
		"/api/v1/applications/web/resource/actions/v2": func(w http.ResponseWriter, r *http.Request) {
			var body struct{ Action, Kind, Group, Namespace, ResourceName string }
			require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			region := r.URL.Query().Get("region")
			ran = append(ran, region+" "+body.Group+"/"+body.Kind+" "+body.ResourceName)
			answer(map[string]any{"results": []map[string]any{{"region": region, "group": body.Group, "kind": body.Kind,
				"namespace": body.Namespace, "name": body.ResourceName, "done": []string{"restarted"}}}})(w, r)
		},
	})
	out, err := run("app", "resources", "web", "--region", "eu-west-1")
	require.NoError(t, err)
	assert.Regexp(t, `^REGION +GROUP +KIND +NAMESPACE +NAME +ORPHANED\neu-west-1 +apps +Deployment +shop +web +No\neu-west-1 +ConfigMap +shop +settings +No\n$`, out)
	_, err = run("app", "resources", "web", "--orphaned")
	require.ErrorContains(t, err, "orphaned resources are not offered through ferry-server yet")

	out, err = run("app", "actions", "list", "web", "--kind", "Deployment")
	require.NoError(t, err)
	assert.Regexp(t, `us-east-1 +apps +Deployment +shop +web +restart-us-east-1-apps +false\neu-west-1 +apps +Deployment +shop +web +restart-eu-west-1-apps +false\n$`, out)

	out, err = run("app", "actions", "run", "web", "restart", "--kind", "Deployment", "--resource-name", "web")
	require.NoError(t, err)
	assert.Equal(t, []string{"us-east-1 apps/Deployment web", "eu-west-1 apps/Deployment web"}, ran, "the group comes from the app's resources")
	assert.Equal(t, "us-east-1: action \"restart\" on apps/Deployment shop/web: restarted\neu-west-1: action \"restart\" on apps/Deployment shop/web: restarted\n", out)
	_, err = run("app", "actions", "run", "web", "restart", "--kind", "Deployment", "--resource-name", "web", "--resource-customizations", "cm.yaml")
	require.ErrorContains(t, err, "--resource-customizations is read by ferry-server from argocd-cm")
}
