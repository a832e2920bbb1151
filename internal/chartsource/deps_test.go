package chartsource_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
)

func dependency(name, version, repository string) string {
	return fmt.Sprintf("dependencies:\n- name: %s\n  version: %q\n  repository: %s\n", name, version, repository)
}

func TestDependenciesAreFetchedFromRepositories(t *testing.T) {
	for _, v := range []string{"1.0.0", "1.2.0"} {
		publish(t, "lib", v, "", nil)
	}
	publish(t, "ocilib", "0.3.0", "", nil)
	oci := "oci://" + servers.OCIRegistry + "/charts"
	deps := dependency("lib", "1.*", servers.HelmRepoURL) + fmt.Sprintf("- name: ocilib\n  version: \"0.*\"\n  repository: %s\n", oci)
	publish(t, "umbrella", "1.0.0", deps, nil)
	// Chart.lock pins lib to 1.0.0.
	publish(t, "umbrella", "1.1.0", deps, map[string]string{"Chart.lock": fmt.Sprintf(
		"dependencies:\n- name: lib\n  repository: %s\n  version: 1.0.0\n- name: ocilib\n  repository: %s\n  version: 0.3.0\ndigest: sha256:0\ngenerated: \"2026-01-01T00:00:00Z\"\n",
		servers.HelmRepoURL, oci)})
	publish(t, "umbrella", "2.0.0", dependency("lib", "9.*", servers.HelmRepoURL), nil)

	ctx := context.Background()
	c := newCharts(t, chartsource.Options{})
	for version, want := range map[string][]string{
		"1.0.0": {"lib-1.2.0.tgz", "ocilib-0.3.0.tgz"},
		"1.1.0": {"lib-1.0.0.tgz", "ocilib-0.3.0.tgz"},
	} {
		root, release, err := c.Checkout(ctx, servers.HelmRepoURL, "umbrella", version)
		require.NoError(t, err, version)
		got, _ := filepath.Glob(filepath.Join(root, "umbrella", "charts", "*.tgz"))
		for i := range got {
			got[i] = filepath.Base(got[i])
		}
		require.ElementsMatch(t, want, got, version)
		release()
	}

	_, _, err := c.Checkout(ctx, servers.HelmRepoURL, "umbrella", "2.0.0")
	require.Error(t, err)
	require.True(t, chartsource.IsNotFound(err), "%v", err)
	require.ErrorContains(t, err, `chart dependency "lib" version "9.*"`)
	require.ErrorContains(t, err, "umbrella 2.0.0")

	// The umbrella renders with its dependencies, through the Loader.
	loader := &manifests.Loader{Charts: c, Renderer: &render.Renderer{}}
	loaded, err := loader.LoadApp(ctx, manifests.Request{RepoURL: servers.HelmRepoURL, SHA: "1.0.0", App: "shop", Namespace: "prod",
		Source: app.Source{RepoURL: servers.HelmRepoURL, Chart: "umbrella", TargetRevision: "1.*"}})
	require.NoError(t, err)
	var names []string
	for _, o := range loaded.Objects {
		names = append(names, o.GetKind()+"/"+o.GetName()+"="+fmt.Sprint(o.Object["data"]))
	}
	require.ElementsMatch(t, []string{"ConfigMap/shop-umbrella=map[version:1.0.0]", "ConfigMap/shop-lib=map[version:1.2.0]",
		"ConfigMap/shop-ocilib=map[version:0.3.0]"}, names)
}

func TestChartsInGitGetTheirRemoteDependencies(t *testing.T) {
	publish(t, "gitlib", "2.1.0", "", nil)
	ctx := context.Background()
	c := newCharts(t, chartsource.Options{})
	repo := t.TempDir()
	chart := chartDir(t, "app", "0.1.0", dependency("gitlib", "2.x", servers.HelmRepoURL), nil)
	require.NoError(t, os.Rename(chart, filepath.Join(repo, "charts-app")))

	root, release, err := c.WithDependencies(ctx, repo, "charts-app")
	require.NoError(t, err)
	defer release()
	require.NotEqual(t, repo, root, "the checkout itself is never written to")
	require.FileExists(t, filepath.Join(root, "charts-app", "charts", "gitlib-2.1.0.tgz"))
	require.NoFileExists(t, filepath.Join(repo, "charts-app", "charts", "gitlib-2.1.0.tgz"))

	same, releaseSame, err := c.WithDependencies(ctx, repo, ".")
	require.NoError(t, err)
	releaseSame()
	require.Equal(t, repo, same, "no chart there: nothing to fetch")
}
