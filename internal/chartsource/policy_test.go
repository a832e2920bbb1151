package chartsource_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// counting is a real HTTP server on loopback that counts every request it
// receives: what a fetch the policy refuses must never reach.
func counting(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

// stackHosts is the policy a dev stack's worker has: the test's Helm
// repository and OCI registry listed by address and port, nothing else.
func stackHosts(t *testing.T, more ...string) *netpolicy.Hosts {
	t.Helper()
	h, err := netpolicy.ParseHosts(append([]string{hostOf(t, servers.HelmRepoURL), servers.OCIRegistry}, more...), "--render-allow-hosts")
	require.NoError(t, err)
	return h
}

// gitChart writes a repository checkout holding a chart at app/ whose
// Chart.yaml depends on lib 1.x from repository.
func gitChart(t *testing.T, repository string) string {
	t.Helper()
	return gitChartOf(t, "lib", repository)
}

func gitChartOf(t *testing.T, lib, repository string) string {
	t.Helper()
	repo := t.TempDir()
	chart := chartDir(t, "app", "0.1.0", dependency(lib, "1.x", repository), nil)
	require.NoError(t, os.Rename(chart, filepath.Join(repo, "app")))
	return repo
}

func TestDependencyOnAnUnlistedAddressIsNeverFetched(t *testing.T) {
	target, hits := counting(t, nil)
	c := newCharts(t, chartsource.Options{Hosts: stackHosts(t)})
	for _, repository := range []string{
		target.URL, // 127.0.0.1:port
		"http://localhost:" + target.URL[len("http://127.0.0.1:"):], // by name
		"http://user:s3cret@" + hostOf(t, target.URL) + "/charts",   // with credentials
		"oci://" + hostOf(t, target.URL) + "/charts",
	} {
		_, _, err := c.WithDependencies(context.Background(), gitChart(t, repository), "app")
		require.Error(t, err, repository)
		require.True(t, netpolicy.IsDenied(err), "%v", err)
		require.ErrorContains(t, err, `the Chart.yaml dependency "lib" of chart app names `+chartsource.RedactURL(repository))
		require.ErrorContains(t, err, "a loopback address, which the worker's host policy refuses")
		require.ErrorContains(t, err, "lists it in --render-allow-hosts")
		require.NotContains(t, err.Error(), "s3cret")
	}
	require.Zero(t, hits.Load(), "the refused server received requests")
}

func TestIndexEntryArchiveURLOnAnUnlistedAddressIsNeverFetched(t *testing.T) {
	target, hits := counting(t, nil)
	index := func(archiveURL string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/index.yaml" {
				// An archive that the index names here: sent on to the
				// unlisted server, which the dial-time check refuses.
				http.Redirect(w, r, target.URL+"/lib-1.0.0.tgz", http.StatusFound)
				return
			}
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  lib:\n  - apiVersion: v2\n    name: lib\n    version: 1.0.0\n    urls:\n    - %s\n", archiveURL)
		})
	}
	for _, tt := range []struct {
		name, archive string
		want          func(repo string) string
	}{
		{"entry names the unlisted address", target.URL + "/lib-1.0.0.tgz", func(repo string) string {
			return `the index.yaml entry of chart "lib" 1.0.0 in ` + repo + ` names ` + target.URL + `/lib-1.0.0.tgz, which is not fetched: ` +
				hostOf(t, target.URL) + ` is a loopback address`
		}},
		{"entry redirects to the unlisted address", "lib-1.0.0.tgz", func(string) string {
			return hostOf(t, target.URL) + " is a loopback address, which the worker's host policy refuses"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			listed, _ := counting(t, index(tt.archive))
			c := newCharts(t, chartsource.Options{Hosts: stackHosts(t, hostOf(t, listed.URL))})
			_, _, err := c.WithDependencies(context.Background(), gitChart(t, listed.URL), "app")
			require.Error(t, err)
			require.True(t, netpolicy.IsDenied(err), "%v", err)
			require.ErrorContains(t, err, tt.want(listed.URL))
			require.ErrorContains(t, err, "--render-allow-hosts")
			require.Zero(t, hits.Load(), "the refused server received requests")
		})
	}
}

func TestDependenciesOutsideTheProjectAreNeverFetched(t *testing.T) {
	publish(t, "policylib", "1.0.0", "", nil)
	c := newCharts(t, chartsource.Options{Hosts: stackHosts(t)})
	refuse := func(repoURL string) error { return &netpolicy.RepoError{App: "shop", Project: "team-a"} }
	ctx := netpolicy.WithRepoCheck(context.Background(), refuse)
	_, _, err := c.WithDependencies(ctx, gitChartOf(t, "policylib", servers.HelmRepoURL), "app")
	require.Error(t, err)
	require.True(t, netpolicy.IsDenied(err), "%v", err)
	require.ErrorContains(t, err, `the Chart.yaml dependency "policylib" of chart app names `+servers.HelmRepoURL)
	require.ErrorContains(t, err, `project "team-a" does not allow this repository (sourceRepos)`)
	require.Zero(t, c.IndexFetches(servers.HelmRepoURL))

	// Allowed by the project and listed by the operator: fetched.
	allow := netpolicy.WithRepoCheck(context.Background(), func(string) error { return nil })
	root, release, err := c.WithDependencies(allow, gitChartOf(t, "policylib", servers.HelmRepoURL), "app")
	require.NoError(t, err)
	defer release()
	require.FileExists(t, filepath.Join(root, "app", "charts", "policylib-1.0.0.tgz"))
}

func TestChartSourceOnAnUnlistedAddressIsNeverFetched(t *testing.T) {
	target, hits := counting(t, nil)
	c := newCharts(t, chartsource.Options{Hosts: stackHosts(t)})
	_, err := c.Resolve(context.Background(), target.URL, "lib", "1.*")
	require.ErrorContains(t, err, fmt.Sprintf(`resolve chart "lib" of %s version "1.*": %s is a loopback address`, target.URL, hostOf(t, target.URL)))
	_, err = c.Resolve(context.Background(), "http://169.254.169.254/latest", "lib", "1.*")
	require.ErrorContains(t, err, "169.254.169.254 is the cloud metadata address")
	require.Zero(t, hits.Load())
}
