package chartsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/listing"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// Defaults for the zero values of Options.
const (
	DefaultIndexTTL        = 5 * time.Second
	DefaultMaxArchives     = 200
	DefaultRequestTimeout  = 60 * time.Second
	DefaultMaxArchiveBytes = 32 << 20
	DefaultMaxFiles        = 10_000
)

// Options configure Charts.
type Options struct {
	// CacheDir holds the archives (CacheDir/archives), the indexes
	// (CacheDir/index) and the checked-out charts (CacheDir/trees, removed
	// by New). Required.
	CacheDir string
	// IndexTTL is how long a repository's index (or a registry's tag list)
	// is reused; zero means DefaultIndexTTL, negative never.
	IndexTTL time.Duration
	// Credentials gives the credentials of a repository; nil means none.
	Credentials CredentialProvider
	// MaxArchives is how many chart archives are kept; beyond it the least
	// recently used are removed. Zero means DefaultMaxArchives.
	MaxArchives int
	// MaxArchiveBytes bounds a chart archive, packed and inflated: the
	// render sandbox's limit for archived charts (render.Limits). Zero means
	// DefaultMaxArchiveBytes.
	MaxArchiveBytes int64
	// MaxFiles bounds the files of one chart with its dependencies; zero
	// means DefaultMaxFiles.
	MaxFiles int
	// ArchiveFlag names the worker setting that raises MaxArchiveBytes.
	ArchiveFlag string
	// Hosts is the worker's host policy, checked on every URL before a
	// request and on every address dialled (redirects included); nil
	// allows every host.
	Hosts *netpolicy.Hosts
	// RequestTimeout bounds one request to a repository or registry.
	RequestTimeout time.Duration
	// Logger receives evictions and recoveries; nil means slog.Default().
	Logger *slog.Logger
	// Observe, when set, is told of every network request: requestType
	// "helm-index", "helm-chart", "oci-tags", "oci-pull", how long it took
	// and its error (ferry_git_requests_total's type). It must not block.
	Observe func(requestType string, d time.Duration, err error)
}

// Charts resolves chart versions and checks charts out, sharing listings
// and archives between callers. It is safe for concurrent use.
type Charts struct {
	opts       Options
	archivesAt string
	indexAt    string
	treesAt    string
	log        *slog.Logger

	indexes listing.Cache[*chartIndex] // by repository (and chart, for OCI)
	cond    *conditional

	archiveMu sync.Mutex // one writer of the archive directory at a time

	statsMu sync.Mutex
	stats   map[string]*stats
}

type stats struct{ index, archive atomic.Int64 }

// New prepares the cache directory.
func New(opts Options) (*Charts, error) {
	if opts.CacheDir == "" {
		return nil, fmt.Errorf("chart cache: Options.CacheDir is empty")
	}
	if opts.IndexTTL == 0 {
		opts.IndexTTL = DefaultIndexTTL
	}
	if opts.MaxArchives <= 0 {
		opts.MaxArchives = DefaultMaxArchives
	}
	if opts.MaxArchiveBytes <= 0 {
		opts.MaxArchiveBytes = DefaultMaxArchiveBytes
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	c := &Charts{
		opts:       opts,
		archivesAt: filepath.Join(opts.CacheDir, "archives"),
		indexAt:    filepath.Join(opts.CacheDir, "index"),
		treesAt:    filepath.Join(opts.CacheDir, "trees"),
		log:        opts.Logger,
		cond:       newConditional(),
		stats:      map[string]*stats{},
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	for _, d := range []string{c.treesAt, c.indexAt} {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("chart cache %s: %w", opts.CacheDir, err)
		}
	}
	for _, d := range []string{c.archivesAt, c.indexAt, c.treesAt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("chart cache %s: %w", opts.CacheDir, err)
		}
	}
	return c, nil
}

// ResolveOption changes one Resolve call.
type ResolveOption func(*listing.Want)

// MaxAge lets Resolve answer from a listing up to d old (a timer poll passes
// its interval); d <= 0 means never reuse one.
func MaxAge(d time.Duration) ResolveOption { return func(w *listing.Want) { w.MaxAge = d } }

// ForceRefresh makes Resolve wait for a listing that starts after the call.
func ForceRefresh() ResolveOption { return func(w *listing.Want) { w.Force = true } }

// Resolve returns the newest version of chart in repoURL that
// targetRevision (a version or a semver constraint; "" and HEAD mean "*")
// allows, as helm does: an exact version first, then the newest match.
func (c *Charts) Resolve(ctx context.Context, repoURL, chart, targetRevision string, opts ...ResolveOption) (string, error) {
	want := listing.Want{MaxAge: c.opts.IndexTTL}
	for _, o := range opts {
		o(&want)
	}
	idx, err := c.index(ctx, repoURL, chart, want)
	if err != nil {
		return "", fmt.Errorf("resolve chart %q of %s version %q: %w", chart, RedactURL(repoURL), targetRevision, err)
	}
	v, err := idx.match(repoURL, chart, targetRevision)
	if err != nil {
		return "", err
	}
	return v.version, nil
}

// IndexFetches is how many times the index (or tags) of repoURL was
// requested over the network since New, for tests.
func (c *Charts) IndexFetches(repoURL string) int64 { return c.statsFor(repoURL).index.Load() }

// ArchiveFetches is how many chart archives were downloaded from repoURL.
func (c *Charts) ArchiveFetches(repoURL string) int64 { return c.statsFor(repoURL).archive.Load() }

func (c *Charts) statsFor(repoURL string) *stats {
	key := repoKey(repoURL)
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	s := c.stats[key]
	if s == nil {
		s = &stats{}
		c.stats[key] = s
	}
	return s
}

func (c *Charts) observe(requestType string, start time.Time, err error) {
	if c.opts.Observe != nil {
		c.opts.Observe(requestType, time.Since(start), err)
	}
}

// IsOCI reports whether a chart source's repoURL names an OCI registry:
// oci://, or a host/path without a scheme (Argo CD's form with enableOCI).
func IsOCI(repoURL string) bool { return app.IsOCIRepoURL(repoURL) }

// repoKey is a repository's identity: its URL without a trailing slash,
// the scheme and host lower-cased, oci:// added to a bare host/path.
func repoKey(repoURL string) string {
	raw := strings.TrimRight(strings.TrimSpace(repoURL), "/")
	if !strings.Contains(raw, "://") {
		raw = "oci://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.User = nil
	return u.String()
}

func hashOf(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}

// RedactURL removes credentials from a URL for messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
