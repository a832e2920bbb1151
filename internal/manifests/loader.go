package manifests

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// Checkouter gives a directory holding one commit of a repository;
// *gitsource.Repos is one.
type Checkouter interface {
	Checkout(ctx context.Context, repoURL, sha string) (dir string, release func(), err error)
}

// RenderFunc renders a source from a checked-out repository;
// (*render.Renderer).Render is one.
type RenderFunc func(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error)

var _ Checkouter = (*gitsource.Repos)(nil)

// SourceRenderer renders checked-out sources: *render.Renderer in the
// worker's own process, *sandbox.Renderer in a sandbox. Renderers with
// the same Version give the same objects for the same source, so it is
// part of every key.
type SourceRenderer interface {
	Render(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error)
	// SourceType tells how Render would render src, without rendering.
	SourceType(root string, src app.Source) (string, error)
	Version() string
}

var _ SourceRenderer = (*render.Renderer)(nil)

// DefaultLoadTimeout bounds one checkout and render, which runs detached
// from the caller so that callers waiting on the same key are not failed by
// one of them giving up.
const DefaultLoadTimeout = 5 * time.Minute

// Loader gives the rendered manifests of a source at a commit, from the
// cache when it can, else by checking out and rendering (and then filling
// the cache). Concurrent loads of one set render once. Set Repos; the
// other fields have defaults.
type Loader struct {
	// Repos checks commits out. Required.
	Repos Checkouter
	// Charts checks out charts of Helm repositories and OCI registries
	// (spec.source.chart) and fetches the remote dependencies of charts in
	// Git; nil refuses chart sources and leaves dependencies to charts/.
	Charts ChartFetcher
	// KustomizeHelm fetches the charts of repositories that Kustomize's
	// helmCharts name into the checkout before the render, which inflates
	// them (the Renderer's --enable-helm).
	KustomizeHelm bool
	// Cache holds encoded sets; nil means no cache.
	Cache Cache
	// Sealer authenticates every entry put in Cache and checks every entry
	// read from it (an entry that fails is a miss); nil stores entries as
	// they are, for a cache no one else can write.
	Sealer *Sealer
	// Renderer renders checked-out sources with the worker's settings
	// (limits, Helm capabilities, remote Kustomize bases), in the worker's
	// process or in a sandbox; nil means the zero render.Renderer. Its
	// Version is part of every key.
	Renderer SourceRenderer
	// Render replaces Renderer.Render, for tests; set RendererVersion with
	// it.
	Render RenderFunc
	// RendererVersion replaces Renderer.Version() in keys.
	RendererVersion string
	// FailureTag names the worker's limits (render and checkout) in the
	// keys of remembered failures (see FailedError), so that a worker with
	// raised limits renders a source that failed on them again.
	FailureTag string
	// Timeout bounds one checkout and render; zero means DefaultLoadTimeout.
	Timeout time.Duration
	// Logger receives cache entries that failed to decode; nil means
	// slog.Default().
	Logger *slog.Logger
	// Observer, when set, is told of every load and render, for metrics.
	Observer Observer
	// ValueFiles fetches the Helm value files given as URLs (valuefiles.go);
	// nil refuses them.
	ValueFiles ValueFileFetcher

	flights singleflight.Group
}

// Request names one rendered set: a source at a commit, for an
// Application.
type Request struct {
	// RepoURL and SHA (40 hex digits, as gitsource.Repos.Resolve gives)
	// name the commit; Source.RepoURL and Source.TargetRevision are not
	// used.
	RepoURL string
	SHA     string
	Source  app.Source
	// App is the Application's name: Helm's release name unless
	// spec.source.helm.releaseName is set.
	App string
	// Namespace is the Application's destination namespace: Helm's
	// .Release.Namespace unless spec.source.helm.namespace is set.
	Namespace string
	// Hard renders again even when the cache holds the set, and puts the
	// fresh set in its place, as Argo CD's hard refresh invalidates its
	// manifest cache: a render can depend on more than the commit (an
	// unpinned remote Kustomize base, a chart repository).
	Hard bool
	// Fresh lists the refs of the source's remote Kustomize bases afresh
	// rather than from the refs cache, as Hard does, but still answers from
	// the manifest cache when they name the same commits.
	Fresh bool
	// Refs are the other sources of a multi-source app whose files the
	// source's Helm value files name ($ref/path), at their commits.
	Refs []RefAt
	// Local is the digest of a local tree (ferry app sync --local, see
	// PutLocal) to render instead of a commit: SHA is then not used, and
	// the source's Path is the manifests' directory in the tree.
	Local string
	// RepoCheck is the app's project's rule on the repositories its files
	// ask for (remote Kustomize bases, chart dependencies, chart archives
	// an index names elsewhere), checked before each is fetched and on
	// every set they were rendered with; nil allows all.
	RepoCheck netpolicy.RepoCheck

	// valueFiles are the source's value files given as URLs, fetched by
	// the load (Loader.valueFiles), and valueDigests their digests.
	valueFiles, valueDigests map[string]string
}

// Loaded is one rendered manifest set.
type Loaded struct {
	// Digest identifies the set's content ("sha256:…", see Encode): what
	// workflow histories carry instead of the manifests.
	Digest string
	// Objects, sorted as Sort does. Each caller gets its own copies.
	Objects []*unstructured.Unstructured
	Count   int
	// SourceType is how the source was rendered (render.SourceType*).
	SourceType string
	// SourceTypes are a multi-source set's, one per source in order, as
	// Argo CD's status.sourceTypes; nil for one source.
	SourceTypes []string
	// CacheHit is true when the set came from the cache, not from Git.
	CacheHit bool
	// RemoteBases is how many remote Kustomize bases the set was rendered
	// with: when there are any, the set can change without a new commit
	// of the source's repository.
	RemoteBases int
	// Remote are those bases' repositories and refs.
	Remote []render.RemoteRef
}

// Load is LoadApp without the Application's name and namespace: a Helm
// source then needs spec.source.helm.releaseName, and renders for the
// "default" namespace.
//
// Deprecated: use LoadApp, which renders Helm charts as Argo CD does.
func (l *Loader) Load(ctx context.Context, repoURL, sha string, src app.Source) (*Loaded, error) {
	return l.LoadApp(ctx, Request{RepoURL: repoURL, SHA: sha, Source: src})
}

// LoadApp returns the manifests of req.Source at commit req.SHA of
// req.RepoURL. Errors come from Checkout or Render unchanged, so callers
// can classify them (gitsource.IsNotFound, render.IsUserError), or are a
// *FailedError: the same source at the same commit failed so before, for a
// reason in the commit, and is not rendered again (see IsFailed). A cache
// failure is never an error. With req.Hard, the cache is only written.
//
// Directory and Kustomize sets are kept under Key, shared by every
// Application on the same path with the same options, and rendered once
// however many load them at once. A Helm set, and one whose Jsonnet
// variables name the build environment, depends on the app's name and
// namespace too and is kept under HelmKey (render.PerApp); when the source type is
// detected rather than explicit, the Key entry is a marker sending later
// loads to HelmKey without a checkout.
func (l *Loader) LoadApp(ctx context.Context, req Request) (*Loaded, error) {
	ctx = netpolicy.WithRepoCheck(ctx, req.RepoCheck)
	loaded, err := l.loadApp(ctx, req)
	if err == nil {
		// A set another app rendered (a shared key, a joined flight) is
		// this app's only when its project allows the same bases.
		err = checkRemote(req, loaded.Remote)
	}
	if err == nil && l.Observer != nil {
		l.Observer.Loaded(loaded.CacheHit)
	}
	return loaded, err
}

func (l *Loader) loadApp(ctx context.Context, req Request) (*Loaded, error) {
	sha, err := checkRevision(req)
	if err != nil {
		return nil, err
	}
	req.SHA = sha
	if req.valueFiles, req.valueDigests, err = l.valueFiles(ctx, req); err != nil {
		return nil, err
	}
	version := l.version()
	helmKey := req.helmKey(version)
	var v any
	if !render.PerApp(req.Source) && !req.Source.IsChartSource() {
		shared := key(req.RepoURL, sha, req.Source, version, nil, req.Refs, nil, req.valueDigests)
		v, err = l.flight(ctx, flightKey(req, shared), func(ctx context.Context) (any, error) { return l.loadShared(ctx, req, shared, helmKey) })
		if err != nil {
			return nil, err
		}
	}
	if _, ok := v.(*Loaded); !ok {
		// A chart: its sets are per release.
		if v, err = l.flight(ctx, flightKey(req, helmKey), func(ctx context.Context) (any, error) { return l.loadOne(ctx, req, helmKey) }); err != nil {
			return nil, err
		}
	}
	loaded := v.(*Loaded)
	// Fetched files, like remote bases, change without a commit: the app
	// loads again at every reconcile.
	loaded.RemoteBases += len(req.valueFiles)
	return loaded, nil
}

// Observer receives what a Loader does, for metrics
// (ferry_manifest_cache_requests_total, ferry_render_duration_seconds).
// Its methods must not block.
type Observer interface {
	// Loaded is called once per successful LoadApp: from the cache or not.
	Loaded(cacheHit bool)
	// Rendered is called once per render: the source type
	// (render.SourceType*, "" when the render failed before knowing it),
	// how long it took, and its error.
	Rendered(sourceType string, d time.Duration, err error)
}

// perApp is what loadShared gives for a chart: load it per release.
type perApp struct{}

func (l *Loader) version() string {
	switch {
	case l.RendererVersion != "":
		return l.RendererVersion
	case l.Renderer != nil:
		return l.Renderer.Version()
	}
	return render.Version
}

// loadShared loads a source that is not explicitly Helm under key: from
// the cache, or by rendering it, unless it turns out to be a chart.
//
// A source that SourceType could not tell is per app (a plugin that only
// its find.command discovers, in the sandbox) renders for req's app: its
// set goes under perAppKey and key gets the per-app marker.
func (l *Loader) loadShared(ctx context.Context, req Request, key, perAppKey string) (any, error) {
	if got, h, ok := l.get(ctx, key, req.Hard); ok {
		switch {
		case h.PerApp:
			return perApp{}, nil
		case len(h.Remote) > 0:
			if loaded, ok, err := l.loadRemote(ctx, req, key, h.Remote); ok {
				return loaded, err
			}
		default:
			return got, nil
		}
	}
	if err := l.failed(ctx, key, req.Hard); err != nil {
		return nil, err
	}
	dir, release, err := l.checkout(ctx, req)
	if err != nil {
		l.remember(ctx, key, err)
		return nil, err
	}
	defer release()
	if req.Source.Directory == nil && req.Source.Kustomize == nil {
		typ, err := l.renderer().SourceType(dir, renderSource(req.Source))
		if err != nil {
			l.remember(ctx, key, err)
			return nil, err
		}
		if render.PerAppType(typ) {
			l.put(ctx, key, perAppMarker(), false)
			return perApp{}, nil
		}
	}
	loaded, err := l.renderShared(ctx, req, dir, key, perAppKey)
	if err != nil {
		return nil, err
	}
	return loaded, nil
}

// loadOne loads one release of a chart under key.
func (l *Loader) loadOne(ctx context.Context, req Request, key string) (any, error) {
	if got, _, ok := l.get(ctx, key, req.Hard); ok {
		return got, nil
	}
	if err := l.failed(ctx, key, req.Hard); err != nil {
		return nil, err
	}
	dir, release, err := l.checkout(ctx, req)
	if err != nil {
		l.remember(ctx, key, err)
		return nil, err
	}
	defer release()
	loaded, err := l.render(ctx, req, dir, key, "", nil)
	if err != nil {
		l.remember(ctx, key, err)
		return nil, err
	}
	return loaded, nil
}

// render renders the checkout and fills the cache under key, or, when
// perAppKey is set and the source turned out to render per app, under
// perAppKey with the per-app marker under key. bases are the source's
// remote bases, fetched for the render.
func (l *Loader) render(ctx context.Context, req Request, dir, key, perAppKey string, bases []render.RemoteBase) (*Loaded, error) {
	renderFn := l.Render
	if renderFn == nil {
		renderFn = l.renderer().Render
	}
	start := time.Now()
	opts := req.renderOptions(bases)
	refFiles, releaseRefs, err := l.refFiles(ctx, req)
	if err != nil {
		return nil, err
	}
	defer releaseRefs()
	opts.RefFiles = refFiles
	for vf, data := range req.valueFiles {
		if opts.RefFiles == nil {
			opts.RefFiles = map[string]string{}
		}
		opts.RefFiles[vf] = data
	}
	res, err := renderFn(ctx, dir, renderSource(req.Source), opts)
	if l.Observer != nil {
		typ := ""
		if res != nil {
			typ = res.SourceType
		}
		l.Observer.Rendered(typ, time.Since(start), err)
	}
	if err != nil {
		return nil, err
	}
	payload, digest, sorted, err := encode(res.Objects, res.SourceType)
	if err != nil {
		return nil, fmt.Errorf("load manifests of %s at %s: %w", gitsource.RedactURL(req.RepoURL), req.SHA, err)
	}
	if perAppKey != "" && render.PerAppType(res.SourceType) {
		l.put(ctx, key, perAppMarker(), false)
		key = perAppKey
	}
	l.put(ctx, key, payload, holdsSecret(sorted))
	return &Loaded{Digest: digest, Objects: sorted, Count: len(sorted), SourceType: res.SourceType}, nil
}

// renderOptions are the render's options for req, with the remote bases
// fetched for it.
func (req Request) renderOptions(bases []render.RemoteBase) render.Options {
	return render.Options{AppName: req.App, Namespace: req.Namespace, Revision: req.SHA, RemoteBases: bases}
}

func (l *Loader) renderer() SourceRenderer {
	if l.Renderer != nil {
		return l.Renderer
	}
	return &render.Renderer{}
}

func (l *Loader) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}

// copy gives a caller of a shared load objects no other caller holds.
func (l *Loaded) copy() *Loaded {
	c := *l
	c.Objects = make([]*unstructured.Unstructured, len(l.Objects))
	for i, o := range l.Objects {
		c.Objects[i] = o.DeepCopy()
	}
	return &c
}
