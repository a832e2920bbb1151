package pipeline

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/redisconn"
	"github.com/ferry-gitops/ferry/internal/render"
)

// Options configure a render pipeline. Only CacheDir is required: the
// zero value of every other field renders in this process with the
// default limits, no credentials, every host allowed, and no manifest
// cache.
type Options struct {
	// CacheDir holds the Git clone cache; the chart cache is
	// CacheDir/charts. Required.
	CacheDir string
	// Auth gives the credentials of Git repositories; when it is a
	// *gitsource.RepoCreds (Argo CD's repository Secrets), those of chart
	// repositories and registries too. nil: none.
	Auth gitsource.AuthProvider
	// Checkout bounds what the Git clone cache fetches and checks out;
	// zero fields are gitsource's defaults.
	Checkout Checkout
	// Hosts is the policy on what Git, chart and Kustomize fetches may
	// reach; when set it is also installed for go-git's HTTP transports,
	// process-wide (gitsource.InstallHostPolicy). nil: every host.
	Hosts *netpolicy.Hosts
	// Render holds the render settings: limits (which also bound chart
	// archives), Helm capabilities, remote Kustomize bases, plugins. nil:
	// the zero render.Renderer.
	Render *render.Renderer
	// Sandbox, when set, runs renders in the render sandbox it describes
	// (see NewRenderer); nil renders in this process.
	Sandbox *Sandbox
	// Cache chooses the manifest cache and how its entries are sealed.
	Cache Cache
	// ObserveRequest, when set, is told of every network request for
	// sources (gitsource.Options.Observe, chartsource.Options.Observe).
	ObserveRequest func(requestType string, d time.Duration, err error)
	// Observer, when set, is told of every load and render.
	Observer manifests.Observer
}

// Checkout bounds one repository's checkouts (gitsource.Options).
type Checkout struct {
	MaxFileBytes, MaxBytes int64
	// FileFlag and SizeFlag name the settings that raise them, for
	// messages.
	FileFlag, SizeFlag string
}

// Cache chooses the manifest cache: Redis, shared with the workers, when
// Redis is set; else an in-process one of Memory bytes; else none.
type Cache struct {
	Redis *redisconn.Options
	// Memory is the size of the in-process cache, without Redis; zero: no
	// cache.
	Memory int64
	// TTL is how long an entry is kept (zero: in memory, forever).
	TTL time.Duration
	// Key seals and opens every entry (manifests.Sealer): the workers'
	// FERRY_CACHE_KEY. Without it entries are sealed with a random key of
	// this process: still safe, no forged entry is read, but a Redis
	// shared with other workers is of no use, and a warning says so.
	Key string
	// KeyRequired: without Key there is no cache at all. For a reader of
	// the workers' cache (ferry app diff), whose entries open only with
	// their key, and which must not write entries no one else can open.
	KeyRequired bool
	// OnVerifyFailure, when set, is called for every entry that fails to
	// open (manifests.Sealer.OnVerifyFailure).
	OnVerifyFailure func()
}

// Pipeline is a ready render pipeline.
type Pipeline struct {
	// Loader renders and caches: what the activities call.
	Loader *manifests.Loader
	// Repos and Charts are the Loader's Git and chart caches, which also
	// resolve revisions.
	Repos  *gitsource.Repos
	Charts *chartsource.Charts
	// Renderer is the Loader's renderer, and the sandbox it runs in.
	Renderer *Renderer

	observer   manifests.Observer
	failureTag string
	// kustomizeHelm: the renderer inflates Kustomize's helmCharts.
	kustomizeHelm bool
	// valueFiles fetches Helm value files given as URLs.
	valueFiles *manifests.HTTPValueFiles
}

// Close stops the render sandboxes of a pool.
func (p *Pipeline) Close() error { return p.Renderer.Close() }

// New builds a render pipeline: the Git clone cache, the chart cache, the
// manifest cache and its sealer, the renderer, and the Loader over them.
func New(o Options) (*Pipeline, error) {
	if o.CacheDir == "" {
		return nil, errors.New("render pipeline: no cache directory")
	}
	settings := o.Render
	if settings == nil {
		settings = &render.Renderer{}
	}
	gopts := gitsource.DefaultOptions(o.CacheDir)
	gopts.Auth = o.Auth
	gopts.Observe = o.ObserveRequest
	gopts.Hosts = o.Hosts
	if o.Checkout.MaxFileBytes > 0 {
		gopts.MaxFileBytes = o.Checkout.MaxFileBytes
	}
	if o.Checkout.MaxBytes > 0 {
		gopts.MaxCheckoutBytes = o.Checkout.MaxBytes
	}
	gopts.FileFlag, gopts.CheckoutFlag = o.Checkout.FileFlag, o.Checkout.SizeFlag
	if o.Hosts != nil {
		gitsource.InstallHostPolicy(o.Hosts)
	}
	repos, err := gitsource.New(gopts)
	if err != nil {
		return nil, fmt.Errorf("git clone cache in %s: %w", o.CacheDir, err)
	}
	cache, sealer, err := newCache(o.Cache)
	if err != nil {
		return nil, err
	}
	r := &Renderer{SourceRenderer: settings}
	if o.Sandbox != nil {
		s := *o.Sandbox
		if s.StateDir == "" {
			// Workers sharing the directory beside their clone caches each
			// get one of their own in it.
			s.StateDir = filepath.Join(filepath.Dir(o.CacheDir), "sandbox")
		}
		if r, err = NewRenderer(settings, s); err != nil {
			return nil, err
		}
	}
	charts, err := newCharts(o, settings.Limits)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	var memory int64
	if o.Sandbox != nil {
		memory = o.Sandbox.Memory
	}
	// A failure remembered under other limits is not this one's.
	failureTag := fmt.Sprintf("render %+v memory %d checkout %d/%d", settings.Limits, memory, gopts.MaxFileBytes, gopts.MaxCheckoutBytes)
	p := &Pipeline{Repos: repos, Charts: charts, Renderer: r, observer: o.Observer, failureTag: failureTag,
		kustomizeHelm: settings.Kustomize.EnableHelm,
		valueFiles:    &manifests.HTTPValueFiles{Hosts: o.Hosts, MaxBytes: settings.Limits.MaxFileBytes}}
	p.Loader = p.loader(cache, sealer)
	return p, nil
}

// LoaderWith is a Loader over the pipeline's Git and chart caches and
// renderer with another manifest cache: the benchmarks measure a load
// with the clones warm and the cache empty.
func (p *Pipeline) LoaderWith(c Cache) (*manifests.Loader, error) {
	cache, sealer, err := newCache(c)
	if err != nil {
		return nil, err
	}
	return p.loader(cache, sealer), nil
}

func (p *Pipeline) loader(cache manifests.Cache, sealer *manifests.Sealer) *manifests.Loader {
	return &manifests.Loader{Repos: p.Repos, Charts: p.Charts, Cache: cache, Sealer: sealer, Renderer: p.Renderer.SourceRenderer,
		Observer: p.observer, FailureTag: p.failureTag, KustomizeHelm: p.kustomizeHelm, ValueFiles: p.valueFiles}
}

// Open is the manifest cache c chooses and its sealer, for a reader or
// writer of the workers' cache that renders nothing (ferry app sync
// --local); nil, nil when c chooses none.
func (c Cache) Open() (manifests.Cache, *manifests.Sealer, error) { return newCache(c) }

// newCache is the manifest cache c chooses, and its sealer.
func newCache(c Cache) (manifests.Cache, *manifests.Sealer, error) {
	if (c.Redis == nil && c.Memory <= 0) || (c.Key == "" && c.KeyRequired) {
		return nil, nil, nil
	}
	var cache manifests.Cache
	if c.Redis != nil {
		cache = manifests.NewRedisConn(*c.Redis, c.TTL)
	} else {
		cache = manifests.NewMemory(c.Memory, c.TTL)
	}
	var s *manifests.Sealer
	if c.Key == "" {
		if c.Redis != nil {
			slog.Warn("manifest cache: " + manifests.EnvCacheKey + " is not set, so this worker seals its cache entries with a random key " +
				"of its own: no other worker can use what it writes to Redis, nor it theirs, and every region re-renders from Git. " +
				"Give every worker sharing this Redis the same " + manifests.EnvCacheKey + " (e.g. openssl rand -hex 32)")
		}
		s = manifests.NewRandomSealer()
	} else {
		var err error
		if s, err = manifests.NewSealer([]byte(c.Key)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", manifests.EnvCacheKey, err)
		}
	}
	s.OnVerifyFailure = c.OnVerifyFailure
	return cache, s, nil
}

// newCharts is the chart cache in CacheDir/charts: Helm repositories and
// OCI registries, with the repository Secrets' credentials and the render
// limits on archives.
func newCharts(o Options, limits render.Limits) (*chartsource.Charts, error) {
	opts := chartsource.Options{
		CacheDir:        filepath.Join(o.CacheDir, "charts"),
		MaxArchiveBytes: limits.MaxArchiveBytes,
		MaxFiles:        limits.MaxFiles,
		ArchiveFlag:     limits.Flags.ArchiveBytes,
		Observe:         o.ObserveRequest,
		Hosts:           o.Hosts,
	}
	if rc, ok := o.Auth.(*gitsource.RepoCreds); ok {
		opts.Credentials = chartCreds{rc}
	}
	charts, err := chartsource.New(opts)
	if err != nil {
		return nil, fmt.Errorf("chart cache in %s: %w", opts.CacheDir, err)
	}
	return charts, nil
}

// chartCreds gives charts the credentials of Argo CD's repository Secrets.
type chartCreds struct{ rc *gitsource.RepoCreds }

func (c chartCreds) ChartCredential(repoURL string) (chartsource.Credential, error) {
	cred, ok := c.rc.ChartCredential(repoURL)
	if !ok {
		return chartsource.Credential{}, nil
	}
	return chartsource.Credential{Username: cred.Username, Password: cred.Password, InsecureSkipVerify: cred.Insecure,
		CertPEM: cred.TLSCert, KeyPEM: cred.TLSKey, CAPEM: cred.CA, ForceHTTP: cred.ForceHTTP}, nil
}

var _ io.Closer = (*Renderer)(nil)
