package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestLoaderFromFlags: the render flags reach the control worker's
// pipeline (limits, Helm capabilities, the shared Redis cache sealed with
// FERRY_CACHE_KEY), the sandbox in force is a metric, and an entry sealed
// with another FERRY_CACHE_KEY is counted in
// ferry_manifest_cache_verify_failures_total.
func TestLoaderFromFlags(t *testing.T) {
	clearEnv(t)
	t.Setenv(manifests.EnvCacheKey, "the-workers-shared-cache-key")
	cfg, err := parseFlags([]string{"--control", "--cache-dir", filepath.Join(t.TempDir(), "repos"), "--render-sandbox", "none",
		"--redis-addr", "127.0.0.1:1", "--render-max-objects", "7", "--helm-kube-version", "1.29.0"}, io.Discard)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	p, err := newPipeline(cfg, reg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	settings, ok := p.Loader.Renderer.(*render.Renderer)
	require.True(t, ok, "--render-sandbox none renders in the worker's process")
	assert.Equal(t, 7, settings.Limits.MaxObjects)
	assert.Equal(t, "1.29.0", settings.Capabilities.KubeVersion)
	assert.IsType(t, &manifests.Redis{}, p.Loader.Cache, "--redis-addr: the cache the workers share")
	assert.Contains(t, p.Loader.FailureTag, "MaxObjects:7", "a failure remembered under other limits is not this worker's")
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferry_render_sandbox_info The render sandbox in force (--render-sandbox): gvisor, process, pod or none; for gvisor, runsc's platform (--runsc-platform).
# TYPE ferry_render_sandbox_info gauge
ferry_render_sandbox_info{mode="none",platform=""} 1
`), "ferry_render_sandbox_info"))

	s := p.Loader.Sealer
	other, err := manifests.NewSealer([]byte("another-workers-cache-key"))
	require.NoError(t, err)
	_, err = s.Open("k", s.Seal("k", []byte("set"), false))
	require.NoError(t, err)
	_, err = s.Open("k", other.Seal("k", []byte("set"), false))
	require.Error(t, err)
	_, err = s.Open("k", []byte("forged"))
	require.Error(t, err)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferry_manifest_cache_verify_failures_total Manifest cache entries that failed authentication (forged, corrupt, or sealed with another FERRY_CACHE_KEY) and were rendered again.
# TYPE ferry_manifest_cache_verify_failures_total counter
ferry_manifest_cache_verify_failures_total 2
`), "ferry_manifest_cache_verify_failures_total"))

	t.Setenv(manifests.EnvCacheKey, "short")
	_, err = newPipeline(cfg, prometheus.NewRegistry())
	require.ErrorContains(t, err, manifests.EnvCacheKey)
}
