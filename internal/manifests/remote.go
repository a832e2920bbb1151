package manifests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// Remote Kustomize bases (a worker's --kustomize-allow-remote-bases) make
// a set depend on more than the commit: on the commits the bases' refs
// name today. The Loader fetches them itself, before the render, with the
// worker's Git (credentials, clone cache, checkout limits), and keeps such
// a set under a key that adds every base's repository, ref and commit
// (remoteKey). Under Key it keeps a marker naming the bases' refs: a later
// load resolves them (ls-remote, shared like the app's own) and finds the
// set of today's commits without a checkout, or renders again when a ref
// moved.

// RemoteFetcher is a SourceRenderer that reads remote Kustomize bases
// from checkouts the worker fetched: *render.Renderer and
// *sandbox.Renderer are.
type RemoteFetcher interface {
	FetchRemoteBases(ctx context.Context, root string, src app.Source, opts render.Options, fetch render.FetchFunc) ([]render.RemoteBase, error)
}

var _ RemoteFetcher = (*render.Renderer)(nil)

// Resolver resolves a ref of a repository to a commit SHA;
// *gitsource.Repos is one.
type Resolver interface {
	Resolve(ctx context.Context, repoURL, targetRevision string, opts ...gitsource.ResolveOption) (string, error)
}

var _ Resolver = (*gitsource.Repos)(nil)

// remoteRepos is l.Repos when it resolves refs and l's renderer takes
// remote bases; else nil.
func (l *Loader) remoteRepos() (Resolver, RemoteFetcher) {
	res, ok := l.Repos.(Resolver)
	f, ok2 := l.renderer().(RemoteFetcher)
	if !ok || !ok2 {
		return nil, nil
	}
	return res, f
}

// fetchRemote fetches the remote bases of req's source in the checkout at
// dir; release gives their checkouts back. A hard or fresh load lists
// their refs afresh.
func (l *Loader) fetchRemote(ctx context.Context, req Request, dir string) (bases []render.RemoteBase, release func(), err error) {
	var releases []func()
	release = func() {
		for _, r := range releases {
			r()
		}
	}
	res, f := l.remoteRepos()
	if f == nil {
		return nil, release, nil
	}
	bases, err = f.FetchRemoteBases(ctx, dir, renderSource(req.Source), req.renderOptions(nil), func(ctx context.Context, ref render.RemoteRef) (render.RemoteBase, error) {
		if err := checkRemote(req, []render.RemoteRef{ref}); err != nil {
			return render.RemoteBase{}, err
		}
		sha, err := res.Resolve(ctx, ref.Repo, ref.Ref, resolveOptions(req.Hard || req.Fresh)...)
		if err != nil {
			return render.RemoteBase{}, err
		}
		tree, done, err := l.Repos.Checkout(ctx, ref.Repo, sha)
		if err != nil {
			return render.RemoteBase{}, err
		}
		releases = append(releases, done)
		return render.RemoteBase{Repo: ref.Repo, Ref: ref.Ref, SHA: sha, Dir: tree}, nil
	})
	if err != nil {
		release()
		return nil, func() {}, err
	}
	return bases, release, nil
}

func resolveOptions(fresh bool) []gitsource.ResolveOption {
	if fresh {
		return []gitsource.ResolveOption{gitsource.ForceRefresh()}
	}
	return nil
}

// remoteKey is the key of a set rendered from key's source with the
// remote bases at the commits given.
func remoteKey(key string, bases []render.RemoteBase) string {
	h := sha256.New()
	h.Write([]byte("remote\x00" + key))
	for _, b := range bases {
		fmt.Fprintf(h, "\x00%s\x00%s\x00%s", gitsource.NormalizeURL(b.Repo), b.Ref, b.SHA)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// remoteMarker is the entry kept under Key for a set with remote bases:
// their refs, in the order the render met them.
func remoteMarker(sourceType string, bases []render.RemoteBase) []byte {
	refs := refsOf(bases)
	payload, _, _, err := encodeHeader(nil, header{SourceType: sourceType, Remote: refs})
	if err != nil {
		panic(err) // an empty set always encodes
	}
	return payload
}

// loadRemote answers a load whose Key holds a remote marker: the set of
// the commits the bases' refs name now, or the failure remembered for
// them; ok is false when neither is cached (render again).
func (l *Loader) loadRemote(ctx context.Context, req Request, key string, refs []render.RemoteRef) (loaded *Loaded, ok bool, err error) {
	res, _ := l.remoteRepos()
	if res == nil {
		return nil, false, nil
	}
	if err := checkRemote(req, refs); err != nil {
		return nil, true, err
	}
	bases := make([]render.RemoteBase, len(refs))
	for i, ref := range refs {
		sha, err := res.Resolve(ctx, ref.Repo, ref.Ref, resolveOptions(req.Fresh)...)
		if err != nil {
			return nil, true, err
		}
		bases[i] = render.RemoteBase{Repo: ref.Repo, Ref: ref.Ref, SHA: sha}
	}
	rkey := remoteKey(key, bases)
	if got, _, hit := l.get(ctx, rkey, false); hit {
		got.RemoteBases, got.Remote = len(refs), refs
		return got, true, nil
	}
	if err := l.failed(ctx, rkey, false); err != nil {
		return nil, true, err
	}
	return nil, false, nil
}

// renderShared renders the checkout of a source that is not explicitly
// Helm: under key, or, when it has remote bases, under their remoteKey
// (renderRemote). A failure to fetch remote bases is not remembered: it
// may be theirs, and they change without a new commit.
func (l *Loader) renderShared(ctx context.Context, req Request, dir, key, perAppKey string) (*Loaded, error) {
	bases, release, err := l.fetchRemote(ctx, req, dir)
	if err != nil {
		return nil, err
	}
	defer release()
	if len(bases) > 0 {
		return l.renderRemote(ctx, req, dir, key, bases)
	}
	loaded, err := l.render(ctx, req, dir, key, perAppKey, nil)
	if err != nil {
		l.remember(ctx, key, err)
		return nil, err
	}
	return loaded, nil
}

// renderRemote renders a source with remote bases under their remoteKey,
// and leaves the marker under key.
func (l *Loader) renderRemote(ctx context.Context, req Request, dir, key string, bases []render.RemoteBase) (*Loaded, error) {
	rkey := remoteKey(key, bases)
	loaded, _, hit := l.get(ctx, rkey, req.Hard)
	if !hit {
		if err := l.failed(ctx, rkey, req.Hard); err != nil {
			return nil, err
		}
		var err error
		if loaded, err = l.render(ctx, req, dir, rkey, "", bases); err != nil {
			l.remember(ctx, rkey, err)
			return nil, err
		}
	}
	l.put(ctx, key, remoteMarker(loaded.SourceType, bases), false)
	loaded.RemoteBases = len(bases)
	loaded.Remote = refsOf(bases)
	return loaded, nil
}

func refsOf(bases []render.RemoteBase) []render.RemoteRef {
	refs := make([]render.RemoteRef, len(bases))
	for i, b := range bases {
		refs[i] = render.RemoteRef{Repo: b.Repo, Ref: b.Ref}
	}
	return refs
}

// checkRemote checks remote bases against req's project before they are
// fetched, and before a set rendered with them is given to req's app.
// The host policy is the Git transport's (gitsource), at dial time.
func checkRemote(req Request, refs []render.RemoteRef) error {
	if req.RepoCheck == nil {
		return nil
	}
	for _, ref := range refs {
		if err := req.RepoCheck(ref.Repo); err != nil {
			return &netpolicy.DeniedError{URL: gitsource.RedactURL(ref.String()), Asker: "a kustomization.yaml of " + sourceLabel(req), Err: err}
		}
	}
	return nil
}

func sourceLabel(req Request) string {
	return fmt.Sprintf("%s path %q (resources, bases or components)", gitsource.RedactURL(req.RepoURL), cleanPath(req.Source.Path))
}
