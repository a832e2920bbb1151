package gitsource

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sort"
	"strings"
)

// TLSOptions are the TLS settings for an https:// repository: CA
// certificates its server's certificate may chain to (besides the
// system's), and the client certificate it is given.
type TLSOptions struct {
	CABundle              []byte
	ClientCert, ClientKey []byte
}

// TLSProvider gives the TLS settings of a repository URL. An AuthProvider
// that is one too (RepoCreds) is asked for every https:// URL.
type TLSProvider interface {
	TLS(repoURL string) (TLSOptions, error)
}

// TLSCertsConfigMap is the ConfigMap in which Argo CD keeps the CA
// certificates of repository servers: one key per server name (the host
// of the URL, without port), its value PEM certificates.
const TLSCertsConfigMap = "argocd-tls-certs-cm"

// tlsOptions are the TLS settings for repoURL, empty for anything but
// https:// or without a TLSProvider.
func (r *Repos) tlsOptions(repoURL string) (TLSOptions, error) {
	p, ok := r.opts.Auth.(TLSProvider)
	if scheme, _, _, _ := splitURL(repoURL); !ok || scheme != "https" {
		return TLSOptions{}, nil
	}
	o, err := p.TLS(repoURL)
	if err != nil {
		return TLSOptions{}, fmt.Errorf("TLS settings for %s: %w", RedactURL(repoURL), redactErr(err, repoURL))
	}
	return o, nil
}

// TLS returns the client certificate of the Secret Auth would choose for
// repoURL, and the CA certificates argocd-tls-certs-cm holds for its host.
func (rc *RepoCreds) TLS(repoURL string) (TLSOptions, error) {
	var o TLSOptions
	if c := rc.lookup(repoURL); c != nil && c.tlsCert != "" {
		o.ClientCert, o.ClientKey = []byte(c.tlsCert), []byte(c.tlsKey)
	}
	host, _ := urlHostPort(repoURL)
	o.CABundle = rc.cas[host]
	return o, nil
}

// parseTLSClientCert checks a Secret's tlsClientCertData and
// tlsClientCertKey: both or neither, a matching PEM pair.
func parseTLSClientCert(fields map[string]string) (cert, key string, problems []string) {
	cert, key = fields["tlsClientCertData"], fields["tlsClientCertKey"]
	switch {
	case cert == "" && key == "":
		return "", "", nil
	case cert == "" || key == "":
		return "", "", []string{"give tlsClientCertData and tlsClientCertKey together"}
	}
	if _, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
		return "", "", []string{"tlsClientCertData and tlsClientCertKey: not a PEM certificate and its private key"}
	}
	return cert, key, nil
}

// parseTLSCerts reads argocd-tls-certs-cm's data: server name to PEM
// certificates. Every bad entry is named.
func parseTLSCerts(source string, data map[string]string) (map[string][]byte, error) {
	cas := map[string][]byte{}
	var problems []string
	for host, pemData := range data {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(pemData)) {
			problems = append(problems, fmt.Sprintf("key %q: no PEM certificate", host))
			continue
		}
		h := strings.ToLower(strings.TrimSpace(host))
		cas[h] = append(bytes.Clone(cas[h]), []byte(pemData)...)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("repository CA certificates: %s: %s", source, strings.Join(problems, "; "))
	}
	return cas, nil
}
