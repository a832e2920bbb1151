package manifests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// Helm value files given as URLs (https://host/values.yaml in
// helm.valueFiles) are fetched by the Loader before every load, outside
// the sandbox, under the worker's host policy: Argo CD has Helm fetch
// them at each manifest generation. Their content digests are part of the
// set's key, so that a changed file renders again at the next load, and a
// set rendered with any counts them in Loaded.RemoteBases, so that the app
// loads at every reconcile (the manifest cache answering while the files
// stay the same). Argo CD itself caches the manifests by revision and
// spec: it sees a changed file at a hard refresh, or when its cache entry
// expires.

// ValueFileFetcher fetches a value file given as a URL; *HTTPValueFiles
// is one.
type ValueFileFetcher interface {
	FetchValueFile(ctx context.Context, rawURL string) ([]byte, error)
}

// HTTPValueFiles fetches value files over HTTP(S) under a host policy,
// without credentials (Helm sends none for Argo CD's value file URLs).
type HTTPValueFiles struct {
	// Hosts is the worker's host policy, checked on the URL and on every
	// address dialled, redirects included.
	Hosts *netpolicy.Hosts
	// MaxBytes bounds one file (render.Limits.MaxFileBytes).
	MaxBytes int64
	// Timeout bounds one fetch; zero: 30 s.
	Timeout time.Duration
	client  *http.Client
}

func (f *HTTPValueFiles) httpClient() *http.Client {
	if f.client == nil {
		f.client = &http.Client{
			Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: f.Hosts.DialContext,
				TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second},
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 {
					return errors.New("more than 5 redirects")
				}
				return f.Hosts.CheckURL(req.URL.String())
			},
		}
	}
	return f.client
}

// FetchValueFile gets rawURL: its body, at most MaxBytes; an error names
// the URL and the status, never the body.
func (f *HTTPValueFiles) FetchValueFile(ctx context.Context, rawURL string) ([]byte, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %s", timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	max := f.MaxBytes
	if max <= 0 {
		max = render.DefaultLimits().MaxFileBytes
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes, the most a value file may hold", max)
	}
	return data, nil
}

// valueFiles are the value files of req's source given as URLs, fetched:
// their contents keyed by the valueFiles entry as written (for the
// render's Options.RefFiles) and their digests (for the key). The build
// environment is substituted into each URL first, as into paths.
func (l *Loader) valueFiles(ctx context.Context, req Request) (files, digests map[string]string, err error) {
	h := req.Source.Helm
	if h == nil {
		return nil, nil, nil
	}
	var env map[string]string
	for i, vf := range h.ValueFiles {
		if !app.ValueFileURL(vf) {
			continue
		}
		if env == nil {
			env = render.BuildEnv(req.Source, req.renderOptions(nil))
		}
		field := fmt.Sprintf("spec.source.helm.valueFiles[%d]", i)
		asker := fmt.Sprintf("app %q %s", req.App, field)
		u := render.Envsubst(vf, env)
		if l.ValueFiles == nil {
			return nil, nil, &render.SourceError{Path: field, Msg: fmt.Sprintf("%q: this worker fetches no value files from URLs", vf)}
		}
		// The host policy only: Argo CD holds such a URL to no project's
		// sourceRepos.
		if err := l.hosts().CheckURL(u); err != nil {
			return nil, nil, &netpolicy.DeniedError{URL: u, Asker: asker, Err: err}
		}
		data, err := l.ValueFiles.FetchValueFile(ctx, u)
		if err != nil {
			if netpolicy.IsDenied(err) {
				return nil, nil, &netpolicy.DeniedError{URL: u, Asker: asker, Err: err}
			}
			return nil, nil, fmt.Errorf("%s: fetch %s: %w", asker, u, err)
		}
		if files == nil {
			files, digests = map[string]string{}, map[string]string{}
		}
		sum := sha256.Sum256(data)
		files[vf], digests[vf] = string(data), hex.EncodeToString(sum[:])
	}
	return files, digests, nil
}

// hosts is the host policy of the value files fetcher, for the check
// before a request.
func (l *Loader) hosts() *netpolicy.Hosts {
	if f, ok := l.ValueFiles.(*HTTPValueFiles); ok {
		return f.Hosts
	}
	return nil
}
