package chartsource

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
)

// Credential is what a repository needs beyond its URL, from Argo CD's
// repository Secrets (type helm or oci).
type Credential struct {
	Username, Password string
	// InsecureSkipVerify skips TLS verification (the Secret's insecure).
	InsecureSkipVerify bool
	// CertPEM and KeyPEM are a TLS client certificate; CAPEM the CAs to
	// trust beyond the system's.
	CertPEM, KeyPEM, CAPEM []byte
	// ForceHTTP talks plain HTTP to a registry (insecureOCIForceHttp).
	ForceHTTP bool
}

// CredentialProvider gives the Credential of a repository URL; the zero
// Credential when it has none.
type CredentialProvider interface {
	ChartCredential(repoURL string) (Credential, error)
}

func (c *Charts) credential(repoURL string) (Credential, error) {
	if c.opts.Credentials == nil {
		return Credential{}, nil
	}
	cred, err := c.opts.Credentials.ChartCredential(repoURL)
	if err != nil {
		return Credential{}, fmt.Errorf("credentials for %s: %w", RedactURL(repoURL), err)
	}
	return cred, nil
}

func tlsConfig(cred Credential) (*tls.Config, error) {
	if !cred.InsecureSkipVerify && len(cred.CertPEM) == 0 && len(cred.CAPEM) == 0 {
		return nil, nil
	}
	cfg := &tls.Config{InsecureSkipVerify: cred.InsecureSkipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // the Secret asks for it
	if len(cred.CertPEM) > 0 {
		pair, err := tls.X509KeyPair(cred.CertPEM, cred.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if len(cred.CAPEM) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(cred.CAPEM) {
			return nil, errors.New("the CA certificates are not PEM")
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// httpGetter is Helm's HTTP getter for repoURL, with its credentials and a
// transport that fetches conditionally.
func (c *Charts) httpGetter(repoURL string) (getter.Getter, []getter.Option, error) {
	cred, err := c.credential(repoURL)
	if err != nil {
		return nil, nil, err
	}
	tlsCfg, err := tlsConfig(cred)
	if err != nil {
		return nil, nil, fmt.Errorf("credentials for %s: %w", RedactURL(repoURL), err)
	}
	base := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg, DisableCompression: true, DialContext: c.opts.Hosts.DialContext}
	// Helm's getter takes an *http.Transport: the conditional round
	// tripper is registered on it for both schemes.
	// A non-nil TLSNextProto keeps HTTP/2 off the outer transport, which
	// never dials: the base one does.
	outer := &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	rt := &conditionalRT{base: base, memo: c.cond}
	outer.RegisterProtocol("http", rt)
	outer.RegisterProtocol("https", rt)
	opts := []getter.Option{getter.WithURL(repoURL), getter.WithTransport(outer), getter.WithTimeout(c.opts.RequestTimeout)}
	if cred.Username != "" || cred.Password != "" {
		opts = append(opts, getter.WithBasicAuth(cred.Username, cred.Password))
	}
	g, err := getter.NewHTTPGetter(opts...)
	return g, opts, err
}

// registryClient is Helm's registry client for repoURL's registry. A
// loopback registry is spoken to over plain HTTP, as Docker does, and so
// is one whose Secret sets insecureOCIForceHttp.
func (c *Charts) registryClient(repoURL string) (*registry.Client, error) {
	cred, err := c.credential(repoURL)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(cred)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", RedactURL(repoURL), err)
	}
	hc := &http.Client{Timeout: c.opts.RequestTimeout, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg,
		DialContext: c.opts.Hosts.DialContext}}
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(hc), registry.ClientOptWriter(io.Discard),
		// Never the machine's docker credentials: only the worker's Secrets.
		registry.ClientOptCredentialsFile(filepath.Join(c.opts.CacheDir, "no-registry-credentials.json"))}
	if cred.Username != "" || cred.Password != "" {
		opts = append(opts, registry.ClientOptBasicAuth(cred.Username, cred.Password))
	}
	if cred.ForceHTTP || isLoopback(ociHost(repoURL)) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	return registry.NewClient(opts...)
}

// ociRef is the registry reference of chartName in repoURL: host/path/chart.
func ociRef(repoURL, chartName string) string {
	ref := strings.TrimRight(strings.TrimSpace(repoURL), "/")
	if i := strings.Index(ref, "://"); i >= 0 {
		ref = ref[i+3:]
	}
	return ref + "/" + chartName
}

func ociHost(repoURL string) string {
	host, _, _ := strings.Cut(ociRef(repoURL, ""), "/")
	return host
}

func isLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// conditional remembers, per URL, the validators and body of the last 200
// answer, so that the next GET asks If-None-Match / If-Modified-Since and
// a 304 is answered from memory.
type conditional struct {
	mu   sync.Mutex
	memo map[string]*memo
}

type memo struct {
	etag, lastModified string
	header             http.Header
	body               []byte
}

func newConditional() *conditional { return &conditional{memo: map[string]*memo{}} }

type conditionalRT struct {
	base http.RoundTripper
	memo *conditional
}

// maxMemo bounds one remembered body (a very large index is fetched whole
// each time rather than held).
const maxMemo = 64 << 20

func (rt *conditionalRT) RoundTrip(req *http.Request) (*http.Response, error) {
	key := req.URL.String()
	if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/index.yaml") {
		return rt.base.RoundTrip(req)
	}
	rt.memo.mu.Lock()
	m := rt.memo.memo[key]
	rt.memo.mu.Unlock()
	if m != nil {
		req = req.Clone(req.Context())
		if m.etag != "" {
			req.Header.Set("If-None-Match", m.etag)
		}
		if m.lastModified != "" {
			req.Header.Set("If-Modified-Since", m.lastModified)
		}
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && m != nil:
		resp.Body.Close()
		return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
			Header: m.header.Clone(), Body: io.NopCloser(bytes.NewReader(m.body)), ContentLength: int64(len(m.body)), Request: req}, nil
	case resp.StatusCode == http.StatusOK && (resp.Header.Get("ETag") != "" || resp.Header.Get("Last-Modified") != ""):
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMemo+1))
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		if len(body) > maxMemo {
			resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
			return resp, nil
		}
		resp.Body.Close()
		rt.memo.mu.Lock()
		rt.memo.memo[key] = &memo{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified"), header: resp.Header.Clone(), body: body}
		rt.memo.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return resp, nil
}

// redactErr removes repoURL's credentials from an error's text.
func redactErr(err error, repoURL string) error {
	u, perr := url.Parse(repoURL)
	if perr != nil || u.User == nil {
		return err
	}
	msg := err.Error()
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "***")
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error with the credentials taken out of its text;
// its cause stays reachable for errors.As (a refused dial, a timeout),
// never for printing.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

type readCloser struct {
	io.Reader
	io.Closer
}
