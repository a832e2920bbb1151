package manifests

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

// Checkouter gives a directory holding one commit of a repository;
// *gitsource.Repos is one.
type Checkouter interface {
	Checkout(ctx context.Context, repoURL, sha string) (dir string, release func(), err error)
}

// RenderFunc renders a source from a checked-out repository; render.Render
// is one.
type RenderFunc func(ctx context.Context, root string, src app.Source) (*render.Result, error)

var _ Checkouter = (*gitsource.Repos)(nil)

// DefaultLoadTimeout bounds one checkout and render, which runs detached
// from the caller so that callers waiting on the same key are not failed by
// one of them giving up.
const DefaultLoadTimeout = 5 * time.Minute

// Loader gives the rendered manifests of a source at a commit, from the
// cache when it can, else by checking out and rendering (and then filling
// the cache). Concurrent loads of one key render once. Set Repos; the other
// fields have defaults.
type Loader struct {
	// Repos checks commits out. Required.
	Repos Checkouter
	// Cache holds encoded sets; nil means no cache.
	Cache Cache
	// Render renders a checked-out source; nil means render.Render.
	Render RenderFunc
	// RendererVersion is part of every key; "" means render.Version. Set
	// it together with Render.
	RendererVersion string
	// Timeout bounds one checkout and render; zero means DefaultLoadTimeout.
	Timeout time.Duration
	// Logger receives cache entries that failed to decode; nil means
	// slog.Default().
	Logger *slog.Logger

	flights singleflight.Group
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
	// CacheHit is true when the set came from the cache, not from Git.
	CacheHit bool
}

// Load returns the manifests of src at commit sha (40 hex digits, as
// gitsource.Repos.Resolve gives) of repoURL. Errors come from Checkout or
// Render unchanged, so callers can classify them (gitsource.IsNotFound,
// render.IsUserError); a cache failure is never an error.
func (l *Loader) Load(ctx context.Context, repoURL, sha string, src app.Source) (*Loaded, error) {
	sha = strings.ToLower(strings.TrimSpace(sha))
	if len(sha) != 40 || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("load manifests of %s: %q is not a full commit SHA; resolve the revision first", gitsource.RedactURL(repoURL), sha)
	}
	version := l.RendererVersion
	if version == "" {
		version = render.Version
	}
	key := Key(repoURL, sha, src, version)

	ch := l.flights.DoChan(key, func() (any, error) {
		timeout := l.Timeout
		if timeout <= 0 {
			timeout = DefaultLoadTimeout
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		return l.load(fctx, key, repoURL, sha, src)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		loaded := res.Val.(*Loaded)
		if res.Shared {
			return loaded.copy(), nil
		}
		return loaded, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Loader) load(ctx context.Context, key, repoURL, sha string, src app.Source) (*Loaded, error) {
	if l.Cache != nil {
		if payload, ok := l.Cache.Get(ctx, key); ok {
			objs, h, err := decode(payload)
			if err == nil {
				return &Loaded{Digest: h.Digest, Objects: objs, Count: len(objs), SourceType: h.SourceType, CacheHit: true}, nil
			}
			l.logger().WarnContext(ctx, "manifest cache: unreadable entry, rendering again", "key", key, "err", err)
		}
	}

	dir, release, err := l.Repos.Checkout(ctx, repoURL, sha)
	if err != nil {
		return nil, err
	}
	defer release()
	renderFn := l.Render
	if renderFn == nil {
		renderFn = render.Render
	}
	res, err := renderFn(ctx, dir, src)
	if err != nil {
		return nil, err
	}
	payload, digest, sorted, err := encode(res.Objects, res.SourceType)
	if err != nil {
		return nil, fmt.Errorf("load manifests of %s at %s: %w", gitsource.RedactURL(repoURL), sha, err)
	}
	if l.Cache != nil {
		l.Cache.Put(ctx, key, payload)
	}
	return &Loaded{Digest: digest, Objects: sorted, Count: len(sorted), SourceType: res.SourceType}, nil
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
