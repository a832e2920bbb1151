package egress_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/egress"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// server is a real HTTP(S) server on loopback counting its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, tlsOn bool) *server {
	s := &server{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		_, _ = io.WriteString(w, "hello from "+r.Host)
	})
	if tlsOn {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *server) hostPort() string { return s.Listener.Addr().String() }

// proxied starts the proxy for plugin "fetcher" with allow and the host
// policy renderAllow, and a relay to it as the sandbox runs one: a client
// that goes through both, trusting tlsServer's certificate when given.
func proxied(t *testing.T, allow, renderAllow []string, tlsServer *server) (*egress.Proxy, *http.Client) {
	t.Helper()
	hosts, err := netpolicy.ParseHosts(renderAllow, "--render-allow-hosts")
	require.NoError(t, err)
	rules, err := egress.ParseRules([]string{"fetcher=" + strings.Join(allow, ",")}, hosts)
	require.NoError(t, err)
	policy, ok := rules.For("fetcher")
	require.True(t, ok)
	p, err := egress.Start(t.TempDir(), policy)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	addr, stop, err := egress.Forward(p.Socket())
	require.NoError(t, err)
	t.Cleanup(stop)
	proxyURL, _ := url.Parse("http://" + addr)
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true}
	if tlsServer != nil {
		tr.TLSClientConfig = tlsServer.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	return p, &http.Client{Transport: tr}
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// TestAllowedHostReachedOthersRefused: through the relay and the proxy, a
// listed host is reached over HTTP and HTTPS (CONNECT); a host off the
// list is refused, named, and receives nothing.
func TestAllowedHostReachedOthersRefused(t *testing.T) {
	plain, secure, other := newServer(t, false), newServer(t, true), newServer(t, false)
	// Loopback servers stand for public hosts: the host policy lists them,
	// as --render-allow-hosts lists a stack's own services.
	renderAllow := []string{plain.hostPort(), secure.hostPort(), other.hostPort()}
	p, c := proxied(t, []string{plain.hostPort(), secure.hostPort()}, renderAllow, secure)

	code, body, err := get(t, c, plain.URL+"/values.yaml")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "hello from "+plain.hostPort(), body)

	code, body, err = get(t, c, secure.URL+"/secret")
	require.NoError(t, err, "HTTPS through CONNECT")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "hello from")

	code, body, err = get(t, c, other.URL+"/")
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, other.hostPort()+" is not on plugin fetcher's egress list")
	require.Zero(t, other.hits.Load(), "the off-list host received a request")

	// HTTPS to the off-list host: CONNECT refused.
	_, _, err = get(t, c, "https://"+other.hostPort()+"/")
	require.Error(t, err)

	refused := p.Refused()
	require.Len(t, refused, 1, "each target once: %+v", refused)
	require.Equal(t, other.hostPort(), refused[0].Target)
	require.Contains(t, refused[0].Reason, "ferry-worker --plugin-egress fetcher=")
	require.Equal(t, int64(1), plain.hits.Load())
}

// TestPrivateAddressRefusedThoughListed: the plugin's list names the
// address or a name of it, and the host policy refuses it anyway: a
// loopback server by address and by a name that resolves to it, the
// cloud metadata address and name. Nothing reaches the server.
func TestPrivateAddressRefusedThoughListed(t *testing.T) {
	s := newServer(t, false)
	_, port, _ := net.SplitHostPort(s.hostPort())
	targets := map[string]string{
		"127.0.0.1:" + port:           "a loopback address",
		"localhost:" + port:           "a loopback address",
		"169.254.169.254:80":          "the cloud metadata address",
		"metadata.google.internal:80": "a cloud metadata service",
	}
	// A name that only DNS (here /etc/hosts) makes loopback: refused on
	// the address dialled.
	if name, err := os.Hostname(); err == nil {
		if addrs, err := net.LookupHost(name); err == nil && len(addrs) > 0 && netip.MustParseAddr(addrs[0]).IsLoopback() {
			targets[name+":"+port] = "resolves to " + addrs[0] + ":" + port + " is a loopback address"
		} else {
			t.Logf("the host name %s is not loopback here: the dial-time case is covered by localhost's name check only", name)
		}
	}
	var allow []string
	for target := range targets {
		allow = append(allow, target)
	}
	p, c := proxied(t, allow, nil, nil)
	for target, what := range targets {
		code, body, err := get(t, c, "http://"+target+"/latest/meta-data")
		require.NoError(t, err, target)
		require.Equal(t, http.StatusForbidden, code, "%s: %s", target, body)
		require.Contains(t, body, what, target)
		require.Contains(t, body, "--render-allow-hosts", target)
	}
	require.Zero(t, s.hits.Load(), "a refused address received a request")
	require.Len(t, p.Refused(), len(targets))
}

func TestParseRulesNamesEveryBadEntry(t *testing.T) {
	_, err := egress.ParseRules([]string{"vault=vault.example.com:8200,user@host", "nolist", "helm=*.10.0.0.1;=x"}, nil)
	require.ErrorContains(t, err, `--plugin-egress vault: "user@host" is not a host name or an IP address`)
	require.ErrorContains(t, err, `--plugin-egress "nolist": write PLUGIN=HOST`)
	require.ErrorContains(t, err, `"*.10.0.0.1": a wildcard covers the names under a domain`)
	require.ErrorContains(t, err, `--plugin-egress "=x"`)

	rules, err := egress.ParseRules([]string{"vault=vault.example.com:8200;helm=*.example.org,203.0.113.7", "vault=backup.example.com"}, nil)
	require.NoError(t, err)
	v, ok := rules.For("vault")
	require.True(t, ok)
	require.True(t, v.Allow.Admits("vault.example.com", "8200"))
	require.False(t, v.Allow.Admits("vault.example.com", "443"), "another port")
	require.True(t, v.Allow.Admits("backup.example.com", "443"), "a second value adds to the list")
	h, _ := rules.For("helm")
	require.True(t, h.Allow.Admits("charts.example.org", "443"))
	require.False(t, h.Allow.Admits("example.org", "443"), "*.domain covers the names under it only")
	require.True(t, h.Allow.Admits("203.0.113.7", "80"))
	_, ok = rules.For("other")
	require.False(t, ok)
	require.ErrorContains(t, rules.Check([]string{"vault"}), "--plugin-egress helm: no plugin of that name in --plugin-dir (plugins: vault)")
	require.NoError(t, rules.Check([]string{"helm", "vault"}))
}
