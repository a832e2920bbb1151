package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// SocketName is the proxy's socket in its directory.
const SocketName = "proxy.sock"

// dialTimeout bounds one connection's dial; a render's own timeout
// bounds the rest.
const dialTimeout = 30 * time.Second

// Proxy is one render's egress proxy: an HTTP proxy on a Unix socket,
// admitting what its Policy admits.
type Proxy struct {
	policy Policy
	dir    string
	ln     net.Listener
	srv    *http.Server
	fwd    *httputil.ReverseProxy

	mu      sync.Mutex
	refused []Refusal
	tunnels map[net.Conn]struct{}
	closed  bool
}

// Refusal is a connection the proxy refused.
type Refusal struct {
	// Target is the host and port asked for.
	Target string
	// Reason says why, with the fix.
	Reason string
}

// Start makes a directory of its own under parent (the system's
// temporary directory when ""), readable by the sandbox's user, and
// serves the proxy on SocketName in it.
func Start(parent string, policy Policy) (*Proxy, error) {
	if policy.Hosts == nil {
		policy.Hosts, _ = netpolicy.ParseHosts(nil, "--render-allow-hosts")
	}
	dir, err := os.MkdirTemp(parent, "ferry-egress-")
	if err != nil {
		return nil, fmt.Errorf("plugin %s's egress proxy: %w", policy.Plugin, err)
	}
	// The sandbox's user (nobody) connects: the directory and the socket
	// are open to it, and the directory holds nothing else.
	sock := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", sock)
	if err == nil {
		err = errors.Join(os.Chmod(dir, 0o755), os.Chmod(sock, 0o777))
	}
	if err != nil {
		if ln != nil {
			_ = ln.Close()
		}
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s's egress proxy: %w", policy.Plugin, err)
	}
	p := &Proxy{policy: policy, dir: dir, ln: ln, tunnels: map[net.Conn]struct{}{}}
	p.fwd = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) },
			ResponseHeaderTimeout: time.Minute,
			DisableKeepAlives:     true,
		},
		ErrorHandler: p.forwardError,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Dir is the directory that holds the socket: the sandbox mounts it.
func (p *Proxy) Dir() string { return p.dir }

// Socket is the socket's path on the host.
func (p *Proxy) Socket() string { return filepath.Join(p.dir, SocketName) }

// Refused are the connections refused so far, in order, each target once.
func (p *Proxy) Refused() []Refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Refusal(nil), p.refused...)
}

// Close stops the proxy, ends its tunnels and removes its directory.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	return errors.Join(err, os.RemoveAll(p.dir))
}

// ServeHTTP serves CONNECT host:port (HTTPS, and any TCP the plugin
// tunnels) and absolute-URL requests (plain HTTP).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		p.fwd.ServeHTTP(w, r)
	default:
		http.Error(w, "ferry egress proxy: only CONNECT and http:// URLs are proxied", http.StatusBadRequest)
	}
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(target, "443")
	}
	ctx, cancel := context.WithTimeout(r.Context(), dialTimeout)
	upstream, err := p.dial(ctx, target)
	cancel()
	if err != nil {
		p.fail(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "ferry egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		return
	}
	defer p.untrack(client, upstream)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// What the client sent after its request line is in buf.
		_, _ = io.Copy(upstream, buf.Reader)
		closeWrite(upstream)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, upstream)
		closeWrite(client)
		done <- struct{}{}
	}()
	<-done
	<-done
}

// dial connects to target ("host:port") when the policy admits it: on
// the plugin's list, then the host policy on the name (a literal address,
// localhost, a metadata name) and on the address dialled (whatever the
// name resolves to, checked as it is connected: no second lookup).
func (p *Proxy) dial(ctx context.Context, target string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, p.refuse(target, "is not host:port")
	}
	if !p.policy.Allow.Admits(host, port) {
		return nil, p.refuse(target, fmt.Sprintf("is not on plugin %s's egress list (%s): an operator who trusts it adds it with ferry-worker %s %s=…",
			p.policy.Plugin, p.policy.Allow, Flag, p.policy.Plugin))
	}
	if err := p.policy.Hosts.CheckHost(host, port); err != nil {
		return nil, p.refuse(target, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := p.policy.Hosts.DialContext(ctx, "tcp", target)
	var he *netpolicy.HostError
	if errors.As(err, &he) {
		return nil, p.refuse(target, "resolves to "+he.Error())
	}
	return conn, err
}

// refusedError is a connection the policy refused; the proxy answers it
// with 403.
type refusedError struct{ Refusal }

func (e *refusedError) Error() string { return e.Target + " " + e.Reason }

func (p *Proxy) refuse(target, reason string) error {
	r := Refusal{Target: target, Reason: reason}
	p.mu.Lock()
	seen := false
	for _, old := range p.refused {
		seen = seen || old.Target == target
	}
	if !seen {
		p.refused = append(p.refused, r)
	}
	p.mu.Unlock()
	return &refusedError{r}
}

// fail answers a connection that could not be made: 403 with the reason
// for a refusal, 502 for a host that does not answer.
func (p *Proxy) fail(w http.ResponseWriter, err error) {
	var refused *refusedError
	if errors.As(err, &refused) {
		http.Error(w, "ferry egress proxy: "+refused.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "ferry egress proxy: "+err.Error(), http.StatusBadGateway)
}

func (p *Proxy) forwardError(w http.ResponseWriter, _ *http.Request, err error) { p.fail(w, err) }

// track keeps a tunnel's connections for Close; false when the proxy is
// closed already (they are closed then).
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.tunnels, c)
	}
}

// closeWrite ends one direction of a tunnel, when the connection can.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
