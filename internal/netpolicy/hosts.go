package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Hosts is a worker's host policy: the addresses a render's fetches may
// reach beyond the public internet. The nil *Hosts allows everything (a
// library used without a worker, and tests).
type Hosts struct {
	prefixes []netip.Prefix
	addrs    []endpoint // IP addresses, with or without a port
	names    []endpoint // host names, with or without a port
	// flag names the setting that lists hosts, for messages.
	flag string
}

// endpoint is an allowed host, and its port when the entry names one.
type endpoint struct {
	host string // a lower-cased name, or an IP address's text
	addr netip.Addr
	port string // "" for any
}

// MetadataNames are the host names of cloud metadata services, refused by
// name before any DNS lookup.
var MetadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata"}

// refused are the ranges a fetch may not reach unless listed, each with
// what it is. The first that holds an address names it.
var refused = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "the cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "the cloud metadata address"},
	{netip.MustParsePrefix("100.100.100.200/32"), "the cloud metadata address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified (this host) address"},
	{netip.MustParsePrefix("::/128"), "an unspecified (this host) address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("fc00::/7"), "a private address (unique local, fc00::/7)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
}

// ParseHosts reads the entries an operator lists: IP addresses, CIDR
// ranges, and host names, an address or name optionally with :PORT
// ("10.1.2.3", "10.0.0.0/8", "[fd00::1]:8443", "git.internal:443"). flag
// names the setting, for messages.
func ParseHosts(entries []string, flag string) (*Hosts, error) {
	h := &Hosts{flag: flag}
	var bad []string
	for _, raw := range entries {
		e := strings.ToLower(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%q is not a CIDR range", raw))
				continue
			}
			h.prefixes = append(h.prefixes, p.Masked())
			continue
		}
		host, port := SplitEntry(e)
		if addr, err := netip.ParseAddr(host); err == nil {
			h.addrs = append(h.addrs, endpoint{host: host, addr: addr.Unmap(), port: port})
			continue
		}
		if strings.ContainsAny(host, " :@?#[]") || host == "" {
			bad = append(bad, fmt.Sprintf("%q is not a host, an IP address or a CIDR range", raw))
			continue
		}
		h.names = append(h.names, endpoint{host: strings.TrimSuffix(host, "."), port: port})
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s: %s; write hosts, IP addresses or CIDR ranges, each optionally with :PORT, comma-separated",
			flag, strings.Join(bad, "; "))
	}
	return h, nil
}

// SplitEntry splits an operator's host entry into its host and port
// ("" for none): "git.internal:443", "[fd00::1]:8443", "[fd00::1]",
// "fd00::1", "10.1.2.3".
func SplitEntry(e string) (host, port string) {
	if h, p, err := net.SplitHostPort(e); err == nil {
		return h, p
	}
	if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		return e[1 : len(e)-1], ""
	}
	return e, ""
}

// Flag is the setting that lists hosts.
func (h *Hosts) Flag() string {
	if h == nil || h.flag == "" {
		return "the worker's host policy"
	}
	return h.flag
}

// HostError says that the host policy refuses an address or a name.
type HostError struct {
	// Host is what was refused: an address (with its port when dialled)
	// or a name.
	Host string
	// What the address is: "a loopback address", "the cloud metadata
	// address", …
	What string
	Flag string
}

func (e *HostError) Error() string {
	return fmt.Sprintf("%s is %s, which the worker's host policy refuses: an operator who trusts it lists it in %s", e.Host, e.What, e.Flag)
}

// nameListed reports whether the operator listed the host name (with this
// port, or any).
func (h *Hosts) nameListed(host, port string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, n := range h.names {
		if n.host == host && (n.port == "" || n.port == port) {
			return true
		}
	}
	return false
}

// CheckAddr checks an address the worker is about to reach (port may be
// ""): nil when it is public, or listed.
func (h *Hosts) CheckAddr(addr netip.Addr, port string) error {
	if h == nil {
		return nil
	}
	addr = addr.Unmap().WithZone("")
	for _, a := range h.addrs {
		if a.addr == addr && (a.port == "" || a.port == port) {
			return nil
		}
	}
	for _, p := range h.prefixes {
		if p.Contains(addr) {
			return nil
		}
	}
	for _, r := range refused {
		if r.prefix.Contains(addr) {
			shown := addr.String()
			if port != "" {
				shown = net.JoinHostPort(shown, port)
			}
			return &HostError{Host: shown, What: r.what, Flag: h.Flag()}
		}
	}
	return nil
}

// CheckHost checks a URL's host (and port, "" when none) before a
// request: a literal address as CheckAddr does, "localhost" as a loopback
// address and the metadata services' names by name, unless listed. Other
// names are left to the dial-time check.
func (h *Hosts) CheckHost(host, port string) error {
	if h == nil {
		return nil
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if h.nameListed(host, port) {
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return h.CheckAddr(addr, port)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return &HostError{Host: host, What: "a loopback address", Flag: h.Flag()}
	}
	for _, m := range MetadataNames {
		if host == m {
			return &HostError{Host: host, What: "a cloud metadata service", Flag: h.Flag()}
		}
	}
	return nil
}

// CheckURL is CheckHost for a URL: http(s), oci://, ssh:// or Git's
// scp-like user@host:path, or a bare host/path (an OCI reference).
func (h *Hosts) CheckURL(raw string) error {
	if h == nil {
		return nil
	}
	host, port := URLHost(raw)
	return h.CheckHost(host, port)
}

// URLHost is the host and port of a repository URL in any of the forms
// CheckURL takes.
func URLHost(raw string) (host, port string) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		if at := strings.Index(s, "@"); at >= 0 && strings.Contains(s[at:], ":") && !strings.Contains(s[:at], "/") {
			// scp-like: user@host:path
			rest := s[at+1:]
			h, _, _ := strings.Cut(rest, ":")
			return h, ""
		}
		s = "oci://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", ""
	}
	return u.Hostname(), u.Port()
}

// DialContext dials as a net.Dialer does, refusing a connection to an
// address the policy refuses: after the DNS lookup, on the address itself,
// so that a name resolving (or rebinding) to a refused address fails too.
// A host name the operator listed is dialled without the check. For the
// DialContext of an http.Transport: redirects dial through it as well.
func (h *Hosts) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if h != nil {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		if !h.nameListed(host, port) {
			d.Control = h.control
		}
	}
	return d.DialContext(ctx, network, address)
}

// control is the net.Dialer Control function: address is the resolved
// "ip:port" about to be connected.
func (h *Hosts) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("host policy: cannot read the address %q being dialled: %w", address, err)
	}
	return h.CheckAddr(ap.Addr(), fmt.Sprint(ap.Port()))
}

// IsHostRefused reports whether err is (or wraps) a *HostError.
func IsHostRefused(err error) bool {
	var he *HostError
	return errors.As(err, &he)
}
