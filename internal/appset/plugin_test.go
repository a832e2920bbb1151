package appset

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

const pluginToken = "plugin-token-s3cret"

// pluginServer answers as an Argo CD plugin service: the parameter sets
// of answer, for the bearer token pluginToken; status, when set, instead.
func pluginServer(t *testing.T, status *atomic.Int32, got *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/getparams.execute" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+pluginToken {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message": "bad token ` + r.Header.Get("Authorization") + `"}`))
			return
		}
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		got.Store(req)
		switch s := status.Load(); s {
		case 0:
			_, _ = w.Write([]byte(`{"output": {"parameters": [{"app": "web", "env": {"tier": "gold"}}, {"app": "api", "env": {"tier": "silver"}}]}}`))
		case 999:
			_, _ = w.Write([]byte(`<html>not json</html>`))
		default:
			w.WriteHeader(int(s))
			_, _ = w.Write([]byte(`{"error": "plugin broke"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const pluginSet = `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: from-plugin}
spec:
  goTemplate: %t
  generators:
  - plugin:
      configMapRef: {name: my-plugin}
      input:
        parameters: {team: blue, replicas: 2}
      values: {suffix: '%s'}
  template:
    metadata: {name: '%s'}
    spec:
      project: default
      source: {repoURL: https://git.example/apps.git, path: '%s'}
      destination: {name: us-east-1, namespace: x}
`

// TestPluginGenerator: the generator POSTs Argo CD's request with the
// Secret's token and gives the template each parameter set, the input as
// generator.input.parameters and the values rendered with the set; an
// answer of 500 or garbage fails the generation naming the service, and
// never shows the token.
func TestPluginGenerator(t *testing.T) {
	var status atomic.Int32
	var got atomic.Value
	srv := pluginServer(t, &status, &got)
	ctl := &memControl{
		configMaps: map[string]map[string]string{"my-plugin": {"baseUrl": srv.URL + "/", "token": "$plugin-secret:token"}},
		secrets:    map[string]map[string]string{"plugin-secret": {"token": pluginToken + "\n"}},
	}
	opts := Options{Clusters: regions3, Control: ctl, Validate: app.ValidateOptions{Regions: testRegions(t)}}

	s := mustRead(sprintf(pluginSet, true, "{{.env.tier}}", "{{.app}}-{{.generator.input.parameters.team}}-{{.values.suffix}}", "apps/{{.app}}"))
	res, err := Generate(context.Background(), s, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"web-blue-gold", "api-blue-silver"}, appNames(res))
	require.Equal(t, map[string]any{"applicationSetName": "from-plugin", "input": map[string]any{"parameters": map[string]any{"team": "blue", "replicas": 2.0}}}, got.Load())

	s = mustRead(sprintf(pluginSet, false, "{{env.tier}}", "{{app}}-{{values.suffix}}", "apps/{{app}}"))
	res, err = Generate(context.Background(), s, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"web-gold", "api-silver"}, appNames(res))

	for code, want := range map[int32]string{
		500: "spec.generators[0].plugin: POST " + srv.URL + "/api/v1/getparams.execute: the plugin answered 500 Internal Server Error: plugin broke",
		999: `the answer is not {"output": {"parameters": [...]}}`,
	} {
		status.Store(code)
		_, err := Generate(context.Background(), s, opts)
		require.ErrorContains(t, err, want)
		require.ErrorIs(t, err, ErrGenerate)
	}

	// A wrong token: the service echoes it; the error masks it.
	ctl.secrets["plugin-secret"]["token"] = "wrong-token-value"
	_, err = Generate(context.Background(), s, opts)
	require.ErrorContains(t, err, "403 Forbidden")
	require.NotContains(t, err.Error(), "wrong-token-value")

	ctl.configMaps["my-plugin"] = map[string]string{"token": "plain", "requestTimeout": "soon"}
	_, err = Generate(context.Background(), s, opts)
	require.ErrorContains(t, err, "ConfigMap my-plugin: baseUrl is missing")
	require.ErrorContains(t, err, "token must name a Secret's key")
	require.ErrorContains(t, err, `requestTimeout "soon" is not a number of seconds`)

	ctl.configMaps["my-plugin"] = map[string]string{"baseUrl": srv.URL, "token": "$token"}
	_, err = Generate(context.Background(), s, opts)
	require.ErrorContains(t, err, "token: Secret argocd-secret not found")
	ctl.secrets["argocd-secret"] = map[string]string{"other": "x"}
	_, err = Generate(context.Background(), s, opts)
	require.ErrorContains(t, err, `Secret argocd-secret has no key "token"`)
	require.False(t, strings.Contains(err.Error(), pluginToken))
}
