package gitsource

import (
	"github.com/ferry-gitops/ferry/internal/netpolicy"

	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/ferry-gitops/ferry/internal/listing"
)

// Defaults for the zero values of Options.
const (
	DefaultRefsTTL         = 5 * time.Second
	DefaultMaxClones       = 50
	DefaultLsRemoteTimeout = 30 * time.Second
)

// Options configure Repos.
type Options struct {
	// CacheDir holds the clones (CacheDir/clones) and the checked-out trees
	// (CacheDir/trees). One process owns it: trees left by an earlier
	// process are removed by New. Required.
	CacheDir string
	// RefsTTL is how long an ls-remote listing of a repository is reused,
	// so that N Applications on one repository cost one network call per
	// TTL. Zero means DefaultRefsTTL; negative means never reuse.
	RefsTTL time.Duration
	// Auth gives credentials per repository URL; nil means none beyond
	// those written in the URL.
	Auth AuthProvider
	// MaxClones is how many clones are kept; beyond it the least recently
	// used clone that nobody is using is removed. Zero means
	// DefaultMaxClones; negative means no limit.
	MaxClones int
	// LsRemoteTimeout bounds one shared ls-remote, which runs detached from
	// any one caller's context. Zero means DefaultLsRemoteTimeout.
	LsRemoteTimeout time.Duration
	// MaxFileBytes is the largest file (Git object) a fetch brings or a
	// checkout writes, known from the objects' headers before any is
	// inflated; zero means DefaultMaxFileBytes. Past it, Checkout fails
	// with a *LimitError.
	MaxFileBytes int64
	// MaxCheckoutBytes bounds the files of one checked-out commit; zero
	// means DefaultMaxCheckoutBytes.
	MaxCheckoutBytes int64
	// FileFlag and CheckoutFlag name the settings that raise MaxFileBytes
	// and MaxCheckoutBytes, for the errors that report them.
	FileFlag, CheckoutFlag string
	// Hosts is the worker's host policy, checked on every repository URL
	// before a request (see also InstallHostPolicy); nil allows every host.
	Hosts *netpolicy.Hosts
	// Logger receives clone recoveries and evictions; nil means slog.Default().
	Logger *slog.Logger
	// Observe, when set, is told of every network request: requestType
	// "ls-remote" or "fetch", how long it took and its error. For metrics
	// (ferry_git_requests_total, ferry_git_request_duration_seconds); it
	// must not block.
	Observe func(requestType string, d time.Duration, err error)
}

// observe reports one network request to Options.Observe.
func (r *Repos) observe(requestType string, start time.Time, err error) {
	if r.opts.Observe != nil {
		r.opts.Observe(requestType, time.Since(start), err)
	}
}

// DefaultOptions returns Options with every default filled in, for cacheDir.
func DefaultOptions(cacheDir string) Options {
	return Options{
		CacheDir:        cacheDir,
		RefsTTL:         DefaultRefsTTL,
		MaxClones:       DefaultMaxClones,
		LsRemoteTimeout: DefaultLsRemoteTimeout,
	}
}

// Repos resolves revisions and checks out commits of remote Git
// repositories, sharing network calls and clones between callers. It is
// safe for concurrent use.
type Repos struct {
	opts     Options
	clonesAt string
	treesAt  string
	log      *slog.Logger

	refs listing.Cache[refList] // by NormalizeURL

	clonesMu sync.Mutex
	clones   map[string]*clone // by urlHash

	treesMu sync.Mutex
	trees   map[string]*tree // by urlHash + "-" + sha
	// removeTree removes a released tree: os.RemoveAll, slowed down by a
	// test to widen a race.
	removeTree func(dir string) error

	statsMu sync.Mutex
	stats   map[string]*repoStats // by NormalizeURL
}

type repoStats struct {
	lsRemote atomic.Int64
	fetch    atomic.Int64
}

// New prepares the cache directory: it creates it, removes trees left by an
// earlier process and adopts the clones found there.
func New(opts Options) (*Repos, error) {
	if opts.CacheDir == "" {
		return nil, fmt.Errorf("git cache: Options.CacheDir is empty")
	}
	if opts.RefsTTL == 0 {
		opts.RefsTTL = DefaultRefsTTL
	}
	if opts.MaxClones == 0 {
		opts.MaxClones = DefaultMaxClones
	}
	if opts.LsRemoteTimeout <= 0 {
		opts.LsRemoteTimeout = DefaultLsRemoteTimeout
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxCheckoutBytes <= 0 {
		opts.MaxCheckoutBytes = DefaultMaxCheckoutBytes
	}
	r := &Repos{
		opts:     opts,
		clonesAt: filepath.Join(opts.CacheDir, "clones"),
		treesAt:  filepath.Join(opts.CacheDir, "trees"),
		log:      opts.Logger,
		clones:   map[string]*clone{},
		trees:    map[string]*tree{},
		stats:    map[string]*repoStats{},

		removeTree: os.RemoveAll,
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if err := os.RemoveAll(r.treesAt); err != nil {
		return nil, fmt.Errorf("git cache %s: remove old trees: %w", opts.CacheDir, err)
	}
	for _, dir := range []string{r.clonesAt, r.treesAt} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("git cache %s: %w", opts.CacheDir, err)
		}
	}
	if err := r.adoptClones(); err != nil {
		return nil, err
	}
	return r, nil
}

// LsRemoteCalls is how many ls-remote network calls were made for the
// repository since New, for tests and benchmarks.
func (r *Repos) LsRemoteCalls(repoURL string) int64 { return r.statsFor(repoURL).lsRemote.Load() }

// FetchCalls is how many fetches were made for the repository since New.
func (r *Repos) FetchCalls(repoURL string) int64 { return r.statsFor(repoURL).fetch.Load() }

func (r *Repos) statsFor(repoURL string) *repoStats {
	key := NormalizeURL(repoURL)
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	s := r.stats[key]
	if s == nil {
		s = &repoStats{}
		r.stats[key] = s
	}
	return s
}

func (r *Repos) auth(repoURL string) (transport.AuthMethod, error) {
	if r.opts.Auth == nil {
		return nil, nil
	}
	a, err := r.opts.Auth.Auth(repoURL)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", RedactURL(repoURL), redactErr(err, repoURL))
	}
	return a, nil
}

// urlHash names a repository's directories: the hex SHA-256 of its
// normalised URL, so that no part of a URL ever becomes a path.
func urlHash(repoURL string) string {
	sum := sha256.Sum256([]byte(NormalizeURL(repoURL)))
	return hex.EncodeToString(sum[:])
}
