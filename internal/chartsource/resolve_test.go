package chartsource_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

func TestResolvePicksTheNewestMatchingVersion(t *testing.T) {
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0-rc.1", "2.0.0", "10.0.1"} {
		publish(t, "pick", v, "", nil)
	}
	ctx := context.Background()
	c := newCharts(t, chartsource.Options{})
	for _, repoURL := range []string{servers.HelmRepoURL, "oci://" + servers.OCIRegistry + "/charts"} {
		for rev, want := range map[string]string{
			"1.*": "1.1.0", ">=1.0.0 <2.0.0": "1.1.0", "*": "10.0.1", "": "10.0.1", "HEAD": "10.0.1",
			"1.0.0": "1.0.0", "2.0.0-rc.1": "2.0.0-rc.1", "^2.0.0-0": "2.0.0", "~1.0": "1.0.0",
		} {
			got, err := c.Resolve(ctx, repoURL, "pick", rev)
			require.NoError(t, err, "%s %q", repoURL, rev)
			require.Equal(t, want, got, "%s %q", repoURL, rev)
		}
		_, err := c.Resolve(ctx, repoURL, "pick", "3.*")
		require.True(t, chartsource.IsNotFound(err), "%v", err)
		require.ErrorContains(t, err, `chart "pick"`)
		require.ErrorContains(t, err, `"3.*"`)
		require.ErrorContains(t, err, "10.0.1, 2.0.0")
	}
	_, err := c.Resolve(ctx, servers.HelmRepoURL, "nope", "*")
	require.True(t, chartsource.IsNotFound(err), "%v", err)
	require.ErrorContains(t, err, `chart "nope" is not in`)
}

func TestIndexIsFetchedOncePerIntervalAndConditionally(t *testing.T) {
	publish(t, "shared", "1.0.0", "", nil)
	ctx := context.Background()
	c := newCharts(t, chartsource.Options{IndexTTL: time.Hour})
	repo := servers.HelmRepoURL + "/" // written two ways: one repository
	before := servers.IndexFetches()

	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			u := servers.HelmRepoURL
			if i%2 == 0 {
				u = repo
			}
			v, err := c.Resolve(ctx, u, "shared", "1.*", chartsource.MaxAge(time.Hour))
			if err == nil && v != "1.0.0" {
				err = os.ErrInvalid
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int64(1), c.IndexFetches(servers.HelmRepoURL), "20 resolves, one index request")
	require.Equal(t, before+1, servers.IndexFetches(), "the server sent the index once")

	// A forced refresh asks again, conditionally: unchanged, it costs a 304.
	notModified := servers.IndexNotModified()
	v, err := c.Resolve(ctx, repo, "shared", "1.*", chartsource.ForceRefresh())
	require.NoError(t, err)
	require.Equal(t, "1.0.0", v)
	require.Equal(t, notModified+1, servers.IndexNotModified())
	require.Equal(t, before+1, servers.IndexFetches())

	// A new release is seen by the next refresh.
	publish(t, "shared", "1.1.0", "", nil)
	v, err = c.Resolve(ctx, repo, "shared", "1.*", chartsource.ForceRefresh())
	require.NoError(t, err)
	require.Equal(t, "1.1.0", v)
	require.Equal(t, before+2, servers.IndexFetches())
}

func TestCredentialsAreRequired(t *testing.T) {
	publish(t, "private", "1.0.0", "", nil)
	c, err := chartsource.New(chartsource.Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	_, err = c.Resolve(context.Background(), servers.HelmRepoURL, "private", "*")
	require.ErrorContains(t, err, "401")
	require.NotContains(t, err.Error(), repoPass)
}

func TestCheckoutFetchesAnArchiveOnceAndHeals(t *testing.T) {
	publish(t, "once", "1.0.0", "", nil)
	ctx := context.Background()
	cache := t.TempDir()
	for i, repoURL := range []string{servers.HelmRepoURL, "oci://" + servers.OCIRegistry + "/charts", servers.OCIRegistry + "/charts"} {
		c := newCharts(t, chartsource.Options{CacheDir: cache})
		downloads := int64(1)
		if i == 2 {
			downloads = 0 // the registry written without oci://: the same archive
		}
		before := c.ArchiveFetches(repoURL)
		for range 3 {
			root, release, err := c.Checkout(ctx, repoURL, "once", "1.0.0")
			require.NoError(t, err, repoURL)
			data, err := os.ReadFile(filepath.Join(root, "once", "Chart.yaml"))
			require.NoError(t, err)
			require.Contains(t, string(data), "version: 1.0.0")
			require.FileExists(t, filepath.Join(root, "once", "templates", "cm.yaml"))
			st, err := os.Stat(root)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o005), st.Mode().Perm()&0o005, "the sandbox's user reads the checkout")
			release()
			require.NoDirExists(t, root)
		}
		require.Equal(t, before+downloads, c.ArchiveFetches(repoURL), "%s: %d downloads for three checkouts", repoURL, downloads)
	}

	// A corrupt or deleted archive is fetched again.
	c := newCharts(t, chartsource.Options{CacheDir: cache})
	archives, err := filepath.Glob(filepath.Join(cache, "archives", "*.tgz"))
	require.NoError(t, err)
	require.Len(t, archives, 2, "one for the Helm repository, one for the registry's digest (both OCI spellings share it)")
	for _, a := range archives {
		require.NoError(t, os.WriteFile(a, []byte("not a chart"), 0o644))
	}
	root, release, err := c.Checkout(ctx, servers.HelmRepoURL, "once", "1.0.0")
	require.NoError(t, err)
	release()
	require.DirExists(t, filepath.Dir(root))
	require.Equal(t, int64(1), c.ArchiveFetches(servers.HelmRepoURL))
	for _, a := range archives {
		require.NoError(t, os.Remove(a))
	}
	_, release, err = c.Checkout(ctx, "oci://"+servers.OCIRegistry+"/charts", "once", "1.0.0")
	require.NoError(t, err)
	release()
	require.Equal(t, int64(1), c.ArchiveFetches("oci://"+servers.OCIRegistry+"/charts"))
}

func TestCheckoutKeepsToTheArchiveLimit(t *testing.T) {
	big := make([]byte, 0, 300<<10)
	for i := 0; len(big) < 300<<10; i++ {
		big = append(big, byte('a'+i%26))
	}
	publish(t, "big", "1.0.0", "", map[string]string{"files/big.txt": string(big)})
	c := newCharts(t, chartsource.Options{MaxArchiveBytes: 64 << 10, ArchiveFlag: "--render-max-archive-size"})
	_, _, err := c.Checkout(context.Background(), servers.HelmRepoURL, "big", "1.0.0")
	require.True(t, chartsource.IsLimit(err), "%v", err)
	require.ErrorContains(t, err, "--render-max-archive-size")
}

// TestOCIChartUnderAPath: as Argo CD pulls oci://<repoURL>/<chart>, a
// chart source may name part of the registry's path in chart
// (registry.example.com with bitnamicharts/thanos): resolved and checked
// out from a chart pushed under a nested path, repoURL written with and
// without oci://.
func TestOCIChartUnderAPath(t *testing.T) {
	ctx := context.Background()
	target := servers.Target
	target.HelmDir, target.OCIPath = "", "team/platform/charts"
	for _, v := range []string{"1.0.0", "1.2.0"} {
		p, err := devenv.PublishChart(ctx, chartDir(t, "nested", v, "", nil), target)
		require.NoError(t, err)
		require.Equal(t, "oci://"+servers.OCIRegistry+"/team/platform/charts/nested", p.OCIRef)
	}
	c := newCharts(t, chartsource.Options{})
	for _, src := range []struct{ repoURL, chart string }{
		{servers.OCIRegistry, "team/platform/charts/nested"},
		{"oci://" + servers.OCIRegistry + "/team", "platform/charts/nested"},
		{"oci://" + servers.OCIRegistry + "/team/platform/charts", "nested"},
	} {
		v, err := c.Resolve(ctx, src.repoURL, src.chart, "1.*")
		require.NoError(t, err, "%+v", src)
		require.Equal(t, "1.2.0", v, "%+v", src)
		root, release, err := c.Checkout(ctx, src.repoURL, src.chart, v)
		require.NoError(t, err, "%+v", src)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(src.chart), "Chart.yaml"))
		require.NoError(t, err, "%+v", src)
		require.Contains(t, string(data), "version: 1.2.0")
		release()
	}
	_, err := c.Resolve(ctx, servers.OCIRegistry, "team/nested", "1.*")
	require.Error(t, err)
	require.ErrorContains(t, err, "team/nested")
}

// TestCheckoutTakesTheResolvedListing: rendering the version a resolve
// chose reads the archive's address from the listing the resolve used,
// however old, rather than asking the repository for its index again (20
// new apps on one repository cost one index request, not one per render);
// a version the listing lacks (published since) is listed anew.
func TestCheckoutTakesTheResolvedListing(t *testing.T) {
	publish(t, "listed", "1.0.0", "", nil)
	ctx := context.Background()
	c := newCharts(t, chartsource.Options{IndexTTL: -1}) // no listing young enough by age
	v, err := c.Resolve(ctx, servers.HelmRepoURL, "listed", "1.*")
	require.NoError(t, err)
	require.Equal(t, int64(1), c.IndexFetches(servers.HelmRepoURL))
	for range 3 {
		_, release, err := c.Checkout(ctx, servers.HelmRepoURL, "listed", v)
		require.NoError(t, err)
		release()
	}
	require.Equal(t, int64(1), c.IndexFetches(servers.HelmRepoURL), "three checkouts of the resolved version, no index request")

	publish(t, "listed", "1.1.0", "", nil)
	root, release, err := c.Checkout(ctx, servers.HelmRepoURL, "listed", "1.1.0")
	require.NoError(t, err)
	defer release()
	data, err := os.ReadFile(filepath.Join(root, "listed", "Chart.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(data), "version: 1.1.0")
	require.Equal(t, int64(2), c.IndexFetches(servers.HelmRepoURL), "a version published since the listing: listed again")
}
