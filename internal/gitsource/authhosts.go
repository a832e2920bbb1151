package gitsource

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// hostSet is the hosts a credential may be sent to. An entry without a port
// matches the host on any port; "host:port" matches that port only.
type hostSet map[string]bool

func parseHosts(list string) hostSet {
	var hs hostSet
	for _, h := range strings.Split(list, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			if hs == nil {
				hs = hostSet{}
			}
			hs[h] = true
		}
	}
	return hs
}

// match reports whether repoURL's host is in the set; an empty set matches
// nothing.
func (hs hostSet) match(repoURL string) bool {
	host, port := urlHostPort(repoURL)
	if host == "" {
		return false
	}
	return hs[host] || (port != "" && hs[host+":"+port])
}

// urlHostPort returns the lower-cased host and the port as written (empty
// when the URL gives none) of a URL or scp-like address.
func urlHostPort(raw string) (host, port string) {
	raw = strings.TrimSpace(raw)
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", ""
		}
		return strings.ToLower(u.Hostname()), u.Port()
	}
	_, host, _, _ = splitURL(raw)
	return host, ""
}

// PlainHTTPError is returned instead of sending a password or token over
// plain http:// to a host the credential was given for.
type PlainHTTPError struct {
	Host string
	// Fix names what allows it for this credential.
	Fix string
}

func (e *PlainHTTPError) Error() string {
	return fmt.Sprintf("refusing to send the credential for %s over plain http://: use https://, "+
		"or, if this network is trusted, %s", e.Host, e.Fix)
}

// IsCredentialRefused reports whether err is a credential that was not
// sent (plain http://): a configuration error that no retry fixes.
func IsCredentialRefused(err error) bool {
	var plain *PlainHTTPError
	return errors.As(err, &plain)
}

func parseBool(s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	return strconv.ParseBool(strings.TrimSpace(s))
}
