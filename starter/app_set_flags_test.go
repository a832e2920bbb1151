package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// viewOf is the app of testdata/set/file as a worker would show it.
func viewOf(t *testing.T, file string) *contract.View {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "set", file))
	require.NoError(t, err)
	a, err := app.Read(data, testValidateOptions)
	require.NoError(t, err)
	return &contract.View{Application: *a}
}

// specAfter runs an edit on the app of file and returns its spec as JSON,
// or the error.
func specAfter(t *testing.T, file string, edit docEdit) (string, error) {
	t.Helper()
	a, _, err := editedApp(viewOf(t, file), testValidateOptions, edit)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(a.Spec)
	require.NoError(t, err)
	return string(out), nil
}

// jsonOf is YAML as JSON, for JSONEq.
func jsonOf(t *testing.T, y string) string {
	t.Helper()
	out, err := yaml.YAMLToJSON([]byte(y))
	require.NoError(t, err)
	return string(out)
}

func setEdit(t *testing.T, register func(*pflag.FlagSet), apply func(*pflag.FlagSet, *app.Application) error, args ...string) docEdit {
	fs := pflag.NewFlagSet("set", pflag.ContinueOnError)
	register(fs)
	require.NoError(t, fs.Parse(args))
	return specEdit(func(a *app.Application) error { return apply(fs, a) })
}

func TestSetFlagsChangeTheSpec(t *testing.T) {
	cases := []struct {
		name, file string
		args       []string
		want       string // the spec, YAML
		wantErr    []string
	}{{
		name: "revision, path and helm parameters", file: "helm.yaml",
		args: []string{"--revision", "v2", "--path", "charts/shop", "--helm-set", "replicaCount=3", "--helm-set-string", "image.tag=1.27", "--values", "prod.yaml", "--release-name", "shop-prod"},
		want: `
source:
  repoURL: http://127.0.0.1:1/shop.git
  targetRevision: v2
  path: charts/shop
  helm:
    releaseName: shop-prod
    valueFiles: [prod.yaml]
    parameters:
      - {name: replicaCount, value: "3"}
      - {name: image.tag, value: "1.27", forceString: true}
destination: {name: us-east-1, namespace: shop}`,
	}, {
		name: "kustomize images replace the same image; sync policy and options", file: "kustomize.yaml",
		args: []string{"--kustomize-image", "nginx:1.27", "--kustomize-image", "busybox:1.36", "--nameprefix", "prod-",
			"--sync-policy", "automated", "--self-heal", "--auto-prune", "--sync-option", "!Prune", "--sync-option", "ServerSideApply=true", "--dest-namespace", "web-prod"},
		want: `
source:
  repoURL: http://127.0.0.1:1/web.git
  path: overlays/prod
  kustomize:
    namePrefix: prod-
    images: ["nginx:1.27", "redis=registry.local:5000/redis:7", "busybox:1.36"]
destination: {name: us-east-1, namespace: web-prod}
syncPolicy:
  automated: {prune: true, selfHeal: true}
  syncOptions: [CreateNamespace=true, ServerSideApply=true]`,
	}, {
		name: "sync policy none drops automated and an empty policy", file: "helm.yaml",
		args: []string{"--sync-policy", "none"},
		want: `
source:
  repoURL: http://127.0.0.1:1/shop.git
  path: chart
  helm:
    valueFiles: [values.yaml]
    parameters: [{name: replicaCount, value: "1"}]
destination: {name: us-east-1, namespace: shop}`,
	}, {
		name: "a source of a multi-source app by position", file: "multi.yaml",
		args: []string{"--source-position", "2", "--revision", "release"},
		want: `
sources:
  - {repoURL: http://127.0.0.1:1/app.git, path: app}
  - {repoURL: http://127.0.0.1:1/values.git, ref: values, targetRevision: release}
destination: {name: us-east-1, namespace: multi}`,
	}, {
		name: "every problem at once", file: "multi.yaml",
		args: []string{"--revision", "x", "--self-heal", "--jsonnet-libs", "lib", "--dest-name", "mars"},
		wantErr: []string{
			"--jsonnet-libs is argocd's, not ferry's: set spec.source.directory.jsonnet with ferry app patch or edit",
			"--revision: the app has 2 sources (spec.sources): give --source-position 1 to 2",
			"cannot set --self-heal: the app has no automated sync: add --sync-policy automated",
		},
	}, {
		name: "a value the spec refuses names its field", file: "helm.yaml",
		args:    []string{"--sync-option", "Prune=maybe", "--dest-name", "mars"},
		wantErr: []string{"nothing was changed", "spec.syncPolicy.syncOptions", "spec.destination.name"},
	}, {
		name: "no flag", file: "helm.yaml",
		wantErr: []string{"nothing to set"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f setFlags
			got, err := specAfter(t, tc.file, setEdit(t, f.register, f.apply, tc.args...))
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					require.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			require.JSONEq(t, jsonOf(t, tc.want), got)
		})
	}
}

func TestUnsetFlagsRemoveOverrides(t *testing.T) {
	var f unsetFlags
	got, err := specAfter(t, "helm.yaml", setEdit(t, f.register, f.apply, "-p", "replicaCount", "--values", "values.yaml"))
	require.NoError(t, err)
	require.JSONEq(t, jsonOf(t, `
source: {repoURL: http://127.0.0.1:1/shop.git, path: chart}
destination: {name: us-east-1, namespace: shop}`), got)

	var g unsetFlags
	got, err = specAfter(t, "kustomize.yaml", setEdit(t, g.register, g.apply, "--kustomize-image", "redis"))
	require.NoError(t, err)
	require.Contains(t, got, `"images":["nginx:1.25"]`)

	var h unsetFlags
	_, err = specAfter(t, "helm.yaml", setEdit(t, h.register, h.apply, "-p", "replicas", "--kustomize-image", "nginx"))
	require.ErrorContains(t, err, `--parameter: the source has no Helm parameter "replicas"`)
	require.ErrorContains(t, err, `--kustomize-image: the source has no kustomize image override of "nginx"`)
}

func TestPatchAndSources(t *testing.T) {
	edit, err := patchEdit(`[{"op": "replace", "path": "/spec/source/path", "value": "chart-v2"}]`, "json")
	require.NoError(t, err)
	got, err := specAfter(t, "helm.yaml", edit)
	require.NoError(t, err)
	require.Contains(t, got, `"path":"chart-v2"`)

	edit, err = patchEdit(`{"metadata": {"name": "other"}}`, "merge")
	require.NoError(t, err)
	_, err = specAfter(t, "helm.yaml", edit)
	require.ErrorContains(t, err, `metadata.name is "other" after the edit`)

	_, err = patchEdit(`{"op": "replace"}`, "json")
	require.ErrorContains(t, err, "not a JSON patch")
	_, err = patchEdit(`{}`, "strategic")
	require.ErrorContains(t, err, `--type "strategic": want json or merge`)

	// remove-source of the second source leaves a single-source app.
	got, err = specAfter(t, "multi.yaml", specEdit(func(a *app.Application) error { return a.RemoveSource(2) }))
	require.NoError(t, err)
	require.JSONEq(t, jsonOf(t, `
source: {repoURL: http://127.0.0.1:1/app.git, path: app}
destination: {name: us-east-1, namespace: multi}`), got)
	_, err = specAfter(t, "helm.yaml", specEdit(func(a *app.Application) error { return a.RemoveSource(1) }))
	require.ErrorContains(t, err, "an app needs a source")
}

func TestKustomizeImageName(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "nginx", "nginx:1.27": "nginx", "nginx=registry/nginx:1": "nginx",
		"registry.local:5000/redis:7": "registry.local:5000/redis", "registry.local:5000/redis": "registry.local:5000/redis",
		"alpine@sha256:abc": "alpine",
	} {
		require.Equal(t, want, app.KustomizeImageName(image), image)
	}
}
