package gitsource

import "strings"

// ChartCredential is what a repository Secret (type helm or oci, or a
// repo-creds prefix) gives a Helm repository or OCI registry.
type ChartCredential struct {
	Username, Password string
	Insecure           bool // skip TLS verification
	// ForceHTTP is insecureOCIForceHttp: plain HTTP to the registry.
	ForceHTTP       bool
	TLSCert, TLSKey []byte // PEM
	CA              []byte // argocd-tls-certs-cm's for the host
}

// ChartCredential returns the credential of the Secret for repoURL, else
// of the longest repo-creds prefix under which it falls; ok is false when
// none matches. A Secret's url written without a scheme (Argo CD's form for
// an OCI registry with enableOCI) matches oci://<url> too.
func (rc *RepoCreds) ChartCredential(repoURL string) (ChartCredential, bool) {
	key := chartURLKey(repoURL)
	var found *repoCred
	for i, c := range rc.repos {
		if chartURLKey(c.url) == key {
			found = &rc.repos[i]
			break
		}
	}
	if found == nil {
		for i, c := range rc.templates {
			if underPrefix(key, chartURLKey(c.url)) {
				found = &rc.templates[i]
				break
			}
		}
	}
	host, _ := urlHostPort(key)
	out := ChartCredential{CA: rc.cas[host]}
	if found == nil {
		return out, len(out.CA) > 0
	}
	out.Username, out.Password = found.username, found.password
	if found.bearer != "" && out.Password == "" {
		out.Password = found.bearer
	}
	out.Insecure, out.ForceHTTP = found.insecure, found.forceHTTP
	out.TLSCert, out.TLSKey = []byte(found.tlsCert), []byte(found.tlsKey)
	return out, true
}

// chartURLKey compares chart repository URLs: scheme and host lower-cased,
// no trailing slash, oci:// in front of a URL without a scheme.
func chartURLKey(raw string) string {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	if !strings.Contains(s, "://") {
		s = "oci://" + s
	}
	scheme, rest, _ := strings.Cut(s, "://")
	host, p, _ := strings.Cut(rest, "/")
	if p != "" {
		p = "/" + p
	}
	return strings.ToLower(scheme) + "://" + strings.ToLower(host) + p
}
