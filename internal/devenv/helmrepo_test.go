package devenv_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// writeChart writes a chart directory holding one ConfigMap.
func writeChart(t *testing.T, name, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"),
		fmt.Appendf(nil, "apiVersion: v2\nname: %s\nversion: %s\n", name, version), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "templates", "cm.yaml"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  version: {{ .Chart.Version | quote }}\n"), 0o644))
	return dir
}

func TestPublishChartReachesTheHelmRepositoryAndTheRegistry(t *testing.T) {
	ctx := context.Background()
	env := stack.Env()
	require.Equal(t, stack.HelmRepoURL, env["FERRY_HELM_REPO_URL"])
	require.Equal(t, stack.OCIRegistry, env["FERRY_OCI_REGISTRY"])

	for _, v := range []string{"1.0.0", "1.1.0"} {
		p, err := stack.PublishChart(ctx, writeChart(t, "published", v))
		require.NoError(t, err)
		require.Equal(t, "oci://"+stack.OCIRegistry+"/charts/published", p.OCIRef)
	}

	// As helm repo add / helm pull read it, with the Helm SDK's getters.
	entry := &repo.Entry{Name: "dev", URL: stack.HelmRepoURL}
	cr, err := repo.NewChartRepository(entry, getter.All(cli.New()))
	require.NoError(t, err)
	cr.CachePath = t.TempDir()
	indexPath, err := cr.DownloadIndexFile()
	require.NoError(t, err)
	index, err := repo.LoadIndexFile(indexPath)
	require.NoError(t, err)
	latest, err := index.Get("published", "1.*")
	require.NoError(t, err)
	require.Equal(t, "1.1.0", latest.Version)
	url, err := repo.FindChartInRepoURL(stack.HelmRepoURL, "published", "1.0.0", "", "", "", getter.All(cli.New()))
	require.NoError(t, err)
	resp, err := http.Get(url)
	require.NoError(t, err)
	ch, err := loader.LoadArchive(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "1.0.0", ch.Metadata.Version)

	// index.yaml answers a conditional GET with 304, and counts apart.
	fetches, notModified := stack.HelmIndexFetches(), stack.HelmIndexNotModified()
	resp, err = http.Get(stack.HelmRepoURL + "/index.yaml")
	require.NoError(t, err)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	req, _ := http.NewRequest(http.MethodGet, stack.HelmRepoURL+"/index.yaml", nil)
	req.Header.Set("If-None-Match", etag)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotModified, resp.StatusCode)
	require.Equal(t, fetches+1, stack.HelmIndexFetches())
	require.Equal(t, notModified+1, stack.HelmIndexNotModified())

	// As helm pull oci:// reads it.
	client, err := registry.NewClient(registry.ClientOptPlainHTTP())
	require.NoError(t, err)
	tags, err := client.Tags(stack.OCIRegistry + "/charts/published")
	require.NoError(t, err)
	require.Equal(t, []string{"1.1.0", "1.0.0"}, tags)
	pulled, err := client.Pull(stack.OCIRegistry + "/charts/published:1.1.0")
	require.NoError(t, err)
	ch, err = loader.LoadArchive(bytes.NewReader(pulled.Chart.Data))
	require.NoError(t, err)
	require.Equal(t, "1.1.0", ch.Metadata.Version)

	// The CLI's way in: the target read back from the state dir's env file.
	require.NoError(t, stack.WriteEnv(filepath.Join(stack.StateDir, "env")))
	target, err := devenv.TargetOfStateDir(stack.StateDir)
	require.NoError(t, err)
	require.Equal(t, stack.PublishTarget(), target)
}
