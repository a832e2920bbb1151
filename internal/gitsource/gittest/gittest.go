// Package gittest serves Git repositories over smart HTTP with the
// machine's git http-backend, as a real Git host would, for tests of
// packages that read from Git:
//
//	s := gittest.NewServer(t)
//	w := s.NewRepo(t, "apps")
//	sha := w.Commit("first", map[string]string{"app/cm.yaml": "..."})
//	w.Push()
//	// s.URL("apps") serves it; s.Listings() counts ref listings served.
package gittest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Server serves the bare repositories under Root.
type Server struct {
	Root string
	// User and Pass, when User is set, are the basic auth credentials
	// every request must carry.
	User, Pass string

	srv         *httptest.Server
	listings    atomic.Int64
	authMu      sync.Mutex
	auths       []string
	clientCerts []string
}

// NewServer starts a server, stopped when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{Root: t.TempDir()}
	s.srv = httptest.NewServer(s.handler(t))
	t.Cleanup(s.srv.Close)
	return s
}

// NewTLSServer starts a server that speaks HTTPS with cert. With clientCAs
// it asks each client for a certificate chaining to them, and with
// requireClientCert refuses one without; ClientCerts lists the ones it got.
func NewTLSServer(t testing.TB, cert tls.Certificate, clientCAs *x509.CertPool, requireClientCert bool) *Server {
	t.Helper()
	s := &Server{Root: t.TempDir()}
	s.srv = httptest.NewUnstartedServer(s.handler(t))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAs != nil {
		s.srv.TLS.ClientCAs = clientCAs
		s.srv.TLS.ClientAuth = tls.VerifyClientCertIfGiven
		if requireClientCert {
			s.srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) handler(t testing.TB) http.Handler {
	execPath := strings.TrimSpace(Run(t, "", "--exec-path"))
	backend := &cgi.Handler{
		Path:   filepath.Join(execPath, "git-http-backend"),
		Root:   "/",
		Env:    []string{"GIT_PROJECT_ROOT=" + s.Root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.authMu.Lock()
		if a := req.Header.Get("Authorization"); a != "" {
			s.auths = append(s.auths, a)
		}
		if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
			s.clientCerts = append(s.clientCerts, req.TLS.PeerCertificates[0].Subject.CommonName)
		}
		s.authMu.Unlock()
		if s.User != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != s.User || p != s.Pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if strings.HasSuffix(req.URL.Path, "/info/refs") && req.URL.Query().Get("service") == "git-upload-pack" {
			s.listings.Add(1)
		}
		backend.ServeHTTP(w, req)
	})
}

// ClientCerts are the common names of the client certificates of the
// requests the server received, in order.
func (s *Server) ClientCerts() []string {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	return append([]string(nil), s.clientCerts...)
}

// URL is the HTTP URL of repository name (served from Root/name.git).
func (s *Server) URL(name string) string { return s.srv.URL + "/" + name + ".git" }

// Authorizations is every Authorization header the server received, in
// order: what a client sent it, whether right or wrong.
func (s *Server) Authorizations() []string {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	return append([]string(nil), s.auths...)
}

// Listings is how many ref listings the server sent: one per ls-remote or
// fetch, counted at the server.
func (s *Server) Listings() int64 { return s.listings.Load() }

// NewRepo creates an empty bare repository on the server and a work tree
// that pushes to it.
func (s *Server) NewRepo(t testing.TB, name string) *WorkRepo {
	t.Helper()
	bare := filepath.Join(s.Root, name+".git")
	Run(t, "", "init", "--quiet", "--bare", "--initial-branch=main", bare)
	dir := t.TempDir()
	Run(t, dir, "init", "--quiet", "--initial-branch=main")
	Run(t, dir, "remote", "add", "origin", bare)
	return &WorkRepo{t: t, Dir: dir, Bare: bare}
}

// WorkRepo is a work tree pushing to a served repository.
type WorkRepo struct {
	t    testing.TB
	Dir  string
	Bare string
}

// Commit writes files (an empty content deletes the file), commits them on
// the current branch and returns the commit's SHA.
func (w *WorkRepo) Commit(msg string, files map[string]string) string {
	w.t.Helper()
	for name, content := range files {
		p := filepath.Join(w.Dir, filepath.FromSlash(name))
		if content == "" {
			_ = os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	Run(w.t, w.Dir, "add", "-A")
	Run(w.t, w.Dir, "commit", "--quiet", "--allow-empty", "-m", msg)
	return w.Head()
}

// CopyDir copies the directory src (symlinks as symlinks) to dst, a path
// in the work tree, without committing.
func (w *WorkRepo) CopyDir(src, dst string) {
	w.t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(w.Dir, filepath.FromSlash(dst), rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// Head is the SHA of the current commit.
func (w *WorkRepo) Head() string {
	return strings.TrimSpace(Run(w.t, w.Dir, "rev-parse", "HEAD"))
}

// Git runs git in the work tree.
func (w *WorkRepo) Git(args ...string) string { return Run(w.t, w.Dir, args...) }

// Push pushes every branch and tag, forcing.
func (w *WorkRepo) Push() {
	w.t.Helper()
	Run(w.t, w.Dir, "push", "--quiet", "--force", "origin", "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*")
}

// Run runs git in dir with a fixed identity and no user or system config.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Ferry Test", "GIT_AUTHOR_EMAIL=test@ferry.invalid",
		"GIT_COMMITTER_NAME=Ferry Test", "GIT_COMMITTER_EMAIL=test@ferry.invalid",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
