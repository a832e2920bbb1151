package devenv

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHelmRepositoryWithBasicAuthRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "logs"), 0o755))
	h, err := startHelmRepo(dir, "dev", "s3cret")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.stop()) })

	resp, err := http.Get(h.url + "/index.yaml")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	for _, c := range []struct {
		user, pass string
		want       int
	}{{"dev", "wrong", http.StatusUnauthorized}, {"dev", "s3cret", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, h.url+"/index.yaml", nil)
		req.SetBasicAuth(c.user, c.pass)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, c.want, resp.StatusCode, "%s:%s", c.user, c.pass)
	}
	req, _ := http.NewRequest(http.MethodGet, h.url+"/../env", nil)
	req.SetBasicAuth("dev", "s3cret")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
