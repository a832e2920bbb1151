package chartsource_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// servers are a real Helm repository (basic auth: repoUser, repoPass) and
// a real OCI registry, shared by the package's tests.
var servers *devenv.ChartServers

const repoUser, repoPass = "dev", "chart-pw"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chartsource-test-")
	if err != nil {
		panic(err)
	}
	servers, err = devenv.StartChartServers(context.Background(), dir, "", repoUser, repoPass)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the chart servers:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := servers.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// creds gives the test repository's credentials to its URL only.
type creds struct{}

func (creds) ChartCredential(repoURL string) (chartsource.Credential, error) {
	if strings.HasPrefix(repoURL, servers.HelmRepoURL) {
		return chartsource.Credential{Username: repoUser, Password: repoPass}, nil
	}
	return chartsource.Credential{}, nil
}

func newCharts(t *testing.T, opts chartsource.Options) *chartsource.Charts {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	if opts.Credentials == nil {
		opts.Credentials = creds{}
	}
	c, err := chartsource.New(opts)
	require.NoError(t, err)
	return c
}

// chartDir writes a chart holding one ConfigMap; extra are more files
// (Chart.lock, templates) by path.
func chartDir(t *testing.T, name, version, dependencies string, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"Chart.yaml":        fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n%s", name, version, dependencies),
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + name + "\ndata:\n  version: {{ .Chart.Version | quote }}\n",
		"values.yaml":       "greeting: hello\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	for p, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644))
	}
	return dir
}

// publish packages and publishes a chart to both servers.
func publish(t *testing.T, name, version, dependencies string, extra map[string]string) *devenv.Published {
	t.Helper()
	p, err := devenv.PublishChart(context.Background(), chartDir(t, name, version, dependencies, extra), servers.Target)
	require.NoError(t, err)
	return p
}
