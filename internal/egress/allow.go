package egress

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// Flag is the worker's flag that lists a plugin's hosts; messages name it.
const Flag = "--plugin-egress"

// Allow is one plugin's egress allow-list: host names (a leading "*."
// admits every name under a domain) and IP addresses, each optionally
// with a port.
type Allow struct {
	entries []entry
}

type entry struct {
	host     string // lower case, without the "*." of a wildcard
	wildcard bool
	port     string // "" for any
}

// ParseAllow reads a plugin's list: entries such as "vault.example.com",
// "*.example.com", "charts.example.com:443", "203.0.113.7", "[2001:db8::1]:8443".
// Every bad entry is in the error.
func ParseAllow(entries []string) (Allow, error) {
	var a Allow
	var bad []string
	for _, raw := range entries {
		e := strings.ToLower(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			bad = append(bad, fmt.Sprintf("%q: write the host alone, without a scheme or path, e.g. vault.example.com:8200", raw))
			continue
		}
		host, port := netpolicy.SplitEntry(e)
		wildcard := strings.HasPrefix(host, "*.")
		host = strings.TrimSuffix(strings.TrimPrefix(host, "*."), ".")
		_, isAddr := netip.ParseAddr(host)
		switch {
		case port != "" && !validPort(port):
			bad = append(bad, fmt.Sprintf("%q: the port must be a number from 1 to 65535", raw))
		case host == "" || strings.ContainsAny(host, " /@?#[]*") || (strings.Contains(host, ":") && isAddr != nil):
			bad = append(bad, fmt.Sprintf("%q is not a host name or an IP address", raw))
		case wildcard && isAddr == nil:
			bad = append(bad, fmt.Sprintf("%q: a wildcard covers the names under a domain, not an address", raw))
		default:
			a.entries = append(a.entries, entry{host: host, wildcard: wildcard, port: port})
		}
	}
	if len(bad) > 0 {
		return Allow{}, errors.New(strings.Join(bad, "; "))
	}
	return a, nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 1<<16
}

// Admits reports whether the list names host (a name or an address) on
// port.
func (a Allow) Admits(host, port string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		host = addr.Unmap().String()
	}
	for _, e := range a.entries {
		if e.port != "" && e.port != port {
			continue
		}
		if !e.wildcard && host == e.host || e.wildcard && strings.HasSuffix(host, "."+e.host) {
			return true
		}
	}
	return false
}

// String is the list as the operator writes it.
func (a Allow) String() string {
	out := make([]string, len(a.entries))
	for i, e := range a.entries {
		h := e.host
		if e.wildcard {
			h = "*." + h
		}
		if e.port != "" {
			h = net.JoinHostPort(h, e.port)
		}
		out[i] = h
	}
	return strings.Join(out, ",")
}

// Rules are a worker's egress lists, by plugin (its full name, as
// spec.source.plugin.name gives it), and the host policy every
// connection obeys besides.
type Rules struct {
	plugins map[string]Allow
	hosts   *netpolicy.Hosts
}

// ParseRules reads the values of --plugin-egress, each NAME=HOSTS (hosts
// comma-separated; several plugins separated by ';' in one value, as its
// environment twin holds them). hosts is the worker's host policy; nil
// refuses every loopback, private, link-local and metadata address.
func ParseRules(values []string, hosts *netpolicy.Hosts) (*Rules, error) {
	if hosts == nil {
		hosts, _ = netpolicy.ParseHosts(nil, "--render-allow-hosts")
	}
	r := &Rules{plugins: map[string]Allow{}, hosts: hosts}
	var errs []error
	for _, v := range values {
		for _, one := range strings.Split(v, ";") {
			if strings.TrimSpace(one) == "" {
				continue
			}
			name, list, ok := strings.Cut(one, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" || strings.TrimSpace(list) == "" {
				errs = append(errs, fmt.Errorf("%s %q: write PLUGIN=HOST[,HOST…], e.g. vault=vault.example.com:8200 (the plugin's name as spec.source.plugin.name gives it)", Flag, one))
				continue
			}
			a, err := ParseAllow(strings.Split(list, ","))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w; write host names (*.domain for the names under one), or IP addresses, each optionally with :PORT", Flag, name, err))
				continue
			}
			prev := r.plugins[name]
			prev.entries = append(prev.entries, a.entries...)
			r.plugins[name] = prev
		}
	}
	return r, errors.Join(errs...)
}

// Check refuses lists of plugins the worker does not have: plugins are
// their full names (render.Plugin.FullName).
func (r *Rules) Check(plugins []string) error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(r.plugins)) {
		if !slices.Contains(plugins, name) {
			have := strings.Join(plugins, ", ")
			if have == "" {
				have = "none, no --plugin-dir"
			}
			errs = append(errs, fmt.Errorf("%s %s: no plugin of that name in --plugin-dir (plugins: %s): name one as spec.source.plugin.name does, <metadata.name>-<spec.version> when it has a version", Flag, name, have))
		}
	}
	return errors.Join(errs...)
}

// Empty reports whether no plugin has a list.
func (r *Rules) Empty() bool { return r == nil || len(r.plugins) == 0 }

// For is the policy of plugin's connections; ok is false when the
// operator gave it no list (it then gets no proxy at all).
func (r *Rules) For(plugin string) (p Policy, ok bool) {
	if r == nil {
		return Policy{}, false
	}
	a, ok := r.plugins[plugin]
	return Policy{Plugin: plugin, Allow: a, Hosts: r.hosts}, ok
}

// Policy decides one plugin's connections.
type Policy struct {
	Plugin string
	Allow  Allow
	// Hosts is the worker's host policy, applied after Allow.
	Hosts *netpolicy.Hosts
}
