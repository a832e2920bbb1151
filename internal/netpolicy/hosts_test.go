package netpolicy_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

func parse(t *testing.T, entries ...string) *netpolicy.Hosts {
	t.Helper()
	h, err := netpolicy.ParseHosts(entries, "--render-allow-hosts")
	require.NoError(t, err)
	return h
}

func TestAddressesRefusedUnlessListed(t *testing.T) {
	none := parse(t)
	for addr, what := range map[string]string{
		"127.0.0.1":        "a loopback address",
		"::1":              "a loopback address",
		"::ffff:127.0.0.1": "a loopback address",
		"10.1.2.3":         "a private address (RFC 1918)",
		"172.20.0.1":       "a private address (RFC 1918)",
		"192.168.1.1":      "a private address (RFC 1918)",
		"fd12::1":          "a private address (unique local, fc00::/7)",
		"169.254.10.1":     "a link-local address",
		"fe80::1":          "a link-local address",
		"100.64.0.1":       "a shared (CGNAT) address",
		"169.254.169.254":  "the cloud metadata address",
		"fd00:ec2::254":    "the cloud metadata address",
		"0.0.0.0":          "an unspecified (this host) address",
	} {
		err := none.CheckAddr(netip.MustParseAddr(addr), "80")
		require.ErrorContains(t, err, what, addr)
		require.ErrorContains(t, err, "lists it in --render-allow-hosts", addr)
	}
	for _, public := range []string{"8.8.8.8", "140.82.112.3", "2606:4700::1111"} {
		require.NoError(t, none.CheckAddr(netip.MustParseAddr(public), "443"), public)
	}

	listed := parse(t, "10.0.0.0/8", "127.0.0.1:8080", "fd12::1", "[fe80::1]:22")
	require.NoError(t, listed.CheckAddr(netip.MustParseAddr("10.9.9.9"), "443"))
	require.NoError(t, listed.CheckAddr(netip.MustParseAddr("127.0.0.1"), "8080"))
	require.Error(t, listed.CheckAddr(netip.MustParseAddr("127.0.0.1"), "8081"), "another port of a listed address")
	require.NoError(t, listed.CheckAddr(netip.MustParseAddr("fd12::1"), "1"))
	require.NoError(t, listed.CheckAddr(netip.MustParseAddr("fe80::1"), "22"))
	require.Error(t, listed.CheckAddr(netip.MustParseAddr("192.168.0.1"), "443"))

	var nilHosts *netpolicy.Hosts
	require.NoError(t, nilHosts.CheckAddr(netip.MustParseAddr("127.0.0.1"), "1"), "no policy allows all")
}

func TestURLsRefusedBeforeAnyLookup(t *testing.T) {
	h := parse(t, "git.internal")
	for raw, what := range map[string]string{
		"http://169.254.169.254/latest/meta-data": "the cloud metadata address",
		"http://metadata.google.internal/":        "a cloud metadata service",
		"https://localhost:8443/charts":           "a loopback address",
		"oci://127.0.0.1:5000/charts":             "a loopback address",
		"127.0.0.1:5000/charts":                   "a loopback address",
		"git@10.0.0.5:team/repo.git":              "a private address",
		"ssh://git@[::1]:2222/repo.git":           "a loopback address",
		"http://[::ffff:10.0.0.1]/":               "a private address",
	} {
		require.ErrorContains(t, h.CheckURL(raw), what, raw)
	}
	for _, ok := range []string{"https://charts.example.com/", "https://git.internal/team/repo.git", "oci://ghcr.io/org/charts"} {
		require.NoError(t, h.CheckURL(ok), ok)
	}
}

func TestParseHostsNamesBadEntries(t *testing.T) {
	_, err := netpolicy.ParseHosts([]string{"10.0.0.0/33", "user@host", "ok.example.com"}, "--render-allow-hosts")
	require.ErrorContains(t, err, `--render-allow-hosts: "10.0.0.0/33" is not a CIDR range; "user@host" is not a host`)
}

// TestDialChecksTheResolvedAddress: a real listener on loopback, reached by
// a name (localhost) and through a redirect from a listed server: the
// dial-time check refuses both, and the listener receives nothing.
func TestDialChecksTheResolvedAddress(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
	}))
	defer front.Close()

	h := parse(t, front.Listener.Addr().String())
	client := &http.Client{Transport: &http.Transport{DialContext: h.DialContext}}
	for _, u := range []string{"http://localhost:" + port + "/", front.URL} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		require.Error(t, err, u)
		require.True(t, netpolicy.IsHostRefused(err), "%v", err)
		require.ErrorContains(t, err, ":"+port+" is a loopback address")
	}
	require.Zero(t, hits.Load(), "the refused listener received requests")

	// Listed by name, the same listener is reached.
	byName := parse(t, "localhost:"+port)
	resp, err := (&http.Client{Transport: &http.Transport{DialContext: byName.DialContext}}).Get("http://localhost:" + port + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.EqualValues(t, 1, hits.Load())
}

func TestDeniedErrorNamesURLAskerAndRule(t *testing.T) {
	ctx := netpolicy.WithRepoCheck(context.Background(), func(repo string) error {
		if strings.HasPrefix(repo, "https://charts.example.com") {
			return nil
		}
		return &netpolicy.RepoError{App: "shop", Project: "team-a"}
	})
	require.NoError(t, netpolicy.Check(ctx, nil, "x", "https://charts.example.com/stable"))
	err := netpolicy.Check(ctx, nil, `the Chart.yaml dependency "db" of chart app`, "https://u:pw@other.example.com/charts")
	require.EqualError(t, err, `the Chart.yaml dependency "db" of chart app names https://other.example.com/charts, which is not fetched: `+
		`app "shop": project "team-a" does not allow this repository (sourceRepos): vendor it into the app's repository, or have the project's owner add it to sourceRepos`)
	require.True(t, netpolicy.IsDenied(err))
}
