package devenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// helmRepo serves DIR/helm, a directory of packaged charts and the
// index.yaml that PublishChart writes with the Helm SDK, as a Helm chart
// repository over HTTP: what `helm repo add` and Argo CD's
// spec.source.chart read. index.yaml carries an ETag and a Last-Modified
// date, so that a client can fetch it conditionally.
type helmRepo struct {
	dir    string
	url    string
	user   string // basic auth when set
	pass   string
	log    *os.File // DIR/logs/helm.log: one line per request
	server *http.Server
	done   chan error

	// indexFetches counts the GETs of index.yaml that sent it (200), and
	// indexNotModified those answered 304: what a test of the shared index
	// cache counts.
	indexFetches     atomic.Int64
	indexNotModified atomic.Int64
}

// HelmIndexFile is the name of a Helm repository's index.
const HelmIndexFile = "index.yaml"

func startHelmRepo(stateDir, user, pass string) (*helmRepo, error) {
	dir := filepath.Join(stateDir, "helm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("helm repository: %w", err)
	}
	if err := ensureIndex(dir); err != nil {
		return nil, fmt.Errorf("helm repository: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(stateDir, "logs", "helm.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("helm repository: open its log: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("helm repository: listen on a loopback port: %w", err)
	}
	h := &helmRepo{dir: dir, url: "http://" + ln.Addr().String(), user: user, pass: pass, log: logFile, done: make(chan error, 1)}
	h.server = &http.Server{Handler: logRequests(logFile, h), ReadHeaderTimeout: 10 * time.Second}
	go func() { h.done <- h.server.Serve(ln) }()
	return h, nil
}

// ServeHTTP serves index.yaml and the chart archives beside it, nothing
// else: no directory listings, no files outside DIR/helm.
func (h *helmRepo) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	if h.user != "" {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(h.user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(h.pass)) != 1 {
			rw.Header().Set("WWW-Authenticate", `Basic realm="ferry dev helm repository"`)
			http.Error(rw, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(rw, "read-only: publish with `ferry dev publish-chart DIR`", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+req.URL.Path), "/")
	if name != HelmIndexFile && (path.Ext(name) != ".tgz" && path.Ext(name) != ".prov" || strings.Contains(name, "/")) {
		http.NotFound(rw, req)
		return
	}
	f, err := os.Open(filepath.Join(h.dir, name))
	if err != nil {
		http.NotFound(rw, req)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		http.NotFound(rw, req)
		return
	}
	if name == HelmIndexFile {
		data, err := os.ReadFile(f.Name())
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		sum := sha256.Sum256(data)
		rw.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
		rw.Header().Set("Content-Type", "application/yaml")
		rec := &statusRecorder{ResponseWriter: rw, status: http.StatusOK}
		http.ServeContent(rec, req, name, st.ModTime(), bytes.NewReader(data))
		switch rec.status {
		case http.StatusOK:
			h.indexFetches.Add(1)
		case http.StatusNotModified:
			h.indexNotModified.Add(1)
		}
		return
	}
	rw.Header().Set("Content-Type", "application/gzip")
	http.ServeContent(rw, req, name, st.ModTime(), f)
}

func (h *helmRepo) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.server.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = h.server.Close()
	}
	if serveErr := <-h.done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("helm repository: %w", serveErr))
	}
	return errors.Join(err, h.log.Close())
}

// HelmIndexFetches is how many times the stack's Helm repository sent its
// index.yaml (answers 304 Not Modified are not counted), since Start.
func (s *Stack) HelmIndexFetches() int64 { return s.helm.indexFetches.Load() }

// HelmIndexNotModified is how many conditional GETs of index.yaml were
// answered 304 Not Modified.
func (s *Stack) HelmIndexNotModified() int64 { return s.helm.indexNotModified.Load() }
