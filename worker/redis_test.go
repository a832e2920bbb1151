package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/manifests"
)

// TestCacheVerifyFailuresMetric: an entry sealed with another
// FERRY_CACHE_KEY is counted in ferry_manifest_cache_verify_failures_total
// as the worker registers it.
func TestCacheVerifyFailuresMetric(t *testing.T) {
	t.Setenv(manifests.EnvCacheKey, "the-workers-shared-cache-key")
	reg := prometheus.NewRegistry()
	m := newRenderMetrics(reg)
	s, err := newSealer(&config{redisAddr: "127.0.0.1:6379"}, m.verifyFailures.Inc)
	require.NoError(t, err)
	other, err := manifests.NewSealer([]byte("another-workers-cache-key"))
	require.NoError(t, err)

	_, err = s.Open("k", s.Seal("k", []byte("set"), false))
	require.NoError(t, err)
	_, err = s.Open("k", other.Seal("k", []byte("set"), false))
	require.Error(t, err)
	_, err = s.Open("k", []byte("forged"))
	require.Error(t, err)
	n, err := testutil.GatherAndCount(reg, "ferry_manifest_cache_verify_failures_total")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 2.0, testutil.ToFloat64(m.verifyFailures))

	t.Setenv(manifests.EnvCacheKey, "short")
	_, err = newSealer(&config{}, nil)
	require.ErrorContains(t, err, manifests.EnvCacheKey)
}
