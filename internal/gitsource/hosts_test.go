package gitsource_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// TestHostPolicyRefusesUnlistedLoopback: a real Git server on loopback
// that the worker's host policy does not list is never asked anything;
// listed by address and port, it serves.
func TestHostPolicyRefusesUnlistedLoopback(t *testing.T) {
	s := gittest.NewServer(t)
	w := s.NewRepo(t, "app")
	sha := w.Commit("a", map[string]string{"cm.yaml": "x: 1\n"})
	w.Push()
	u, err := url.Parse(s.URL("app"))
	require.NoError(t, err)

	other, err := netpolicy.ParseHosts([]string{"127.0.0.1:1"}, "--render-allow-hosts")
	require.NoError(t, err)
	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir(), RefsTTL: -1, Hosts: other})
	require.NoError(t, err)
	_, err = repos.Resolve(context.Background(), s.URL("app"), "main")
	require.ErrorContains(t, err, s.URL("app")+": "+u.Host+" is a loopback address, which the worker's host policy refuses")
	_, _, err = repos.Checkout(context.Background(), s.URL("app"), sha)
	require.ErrorContains(t, err, "lists it in --render-allow-hosts")
	require.Zero(t, s.Listings(), "the refused server was listed")

	listed, err := netpolicy.ParseHosts([]string{u.Host}, "--render-allow-hosts")
	require.NoError(t, err)
	repos, err = gitsource.New(gitsource.Options{CacheDir: t.TempDir(), RefsTTL: -1, Hosts: listed})
	require.NoError(t, err)
	got, err := repos.Resolve(context.Background(), s.URL("app"), "main")
	require.NoError(t, err)
	require.Equal(t, sha, got)
}
