package gitsource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/ferry-gitops/ferry/internal/listing"
)

// ResolveOption changes one Resolve call.
type ResolveOption func(*resolveConfig)

type resolveConfig struct {
	force  bool
	maxAge time.Duration // 0: Options.RefsTTL
}

// MaxAge lets Resolve answer from a listing of the repository's refs up to
// d old, instead of Options.RefsTTL. A timer poll passes its poll
// interval: then however many Applications poll one repository, and
// however their timers spread, the worker lists it at most once per
// interval, and an Application never sees refs older than its own
// interval. A push is noticed within two intervals (a webhook, which
// refreshes with ForceRefresh, at once). d <= 0 means never reuse.
func MaxAge(d time.Duration) ResolveOption {
	return func(c *resolveConfig) {
		c.maxAge = d
		if d <= 0 {
			c.maxAge = -1
		}
	}
}

// ForceRefresh makes Resolve ignore cached refs: it waits for an ls-remote
// that starts after the call (a hard refresh, or a webhook announcing a
// push), joining one already started after it rather than making another.
func ForceRefresh() ResolveOption { return func(c *resolveConfig) { c.force = true } }

// Resolve turns a targetRevision into a commit SHA (40 lower-case hex). It
// accepts "" and "HEAD" (the remote's default branch), a branch, a tag
// (annotated tags are peeled to their commit), a full ref name
// ("refs/heads/main", "refs/pull/1/head"), a full SHA (returned as it is,
// without a network call) and a short SHA of at least 7 digits (which needs
// the clone: it is fetched, then searched). Like git rev-parse, a tag wins
// over a branch of the same name.
//
// The listing of refs is shared: concurrent calls for one repository make one
// ls-remote, and a listing is reused for Options.RefsTTL (or MaxAge).
func (r *Repos) Resolve(ctx context.Context, repoURL, targetRevision string, opts ...ResolveOption) (string, error) {
	var cfg resolveConfig
	for _, o := range opts {
		o(&cfg)
	}
	rev := strings.TrimSpace(targetRevision)
	if isFullSHA(rev) {
		return strings.ToLower(rev), nil
	}
	ttl := r.opts.RefsTTL
	if cfg.maxAge != 0 {
		ttl = cfg.maxAge
	}
	refs, err := r.listRefs(ctx, repoURL, cfg.force, ttl)
	if err != nil {
		return "", fmt.Errorf("resolve %s revision %q: %w", RedactURL(repoURL), rev, err)
	}
	if sha, ok := refs.match(rev); ok {
		return sha, nil
	}
	if isShortSHA(rev) {
		sha, err := r.resolveShortSHA(ctx, repoURL, rev)
		if err == nil || !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return sha, err
		}
	}
	return "", &RevisionNotFoundError{
		RepoURL:  RedactURL(repoURL),
		Revision: rev,
		Branches: refs.branches(),
		Tags:     refs.tags(),
	}
}

// refList is one ls-remote listing, by full ref name; peeled tags are under
// "refs/tags/<name>^{}".
type refList map[string]*plumbing.Reference

func (l refList) match(rev string) (string, bool) {
	if rev == "" || rev == "HEAD" {
		return l.hash("HEAD", 0)
	}
	var candidates []string
	if strings.HasPrefix(rev, "refs/") {
		candidates = append(candidates, rev)
	}
	candidates = append(candidates, "refs/tags/"+rev, "refs/heads/"+rev)
	for _, name := range candidates {
		if sha, ok := l.hash(name+"^{}", 0); ok {
			return sha, true
		}
		if sha, ok := l.hash(name, 0); ok {
			return sha, true
		}
	}
	return "", false
}

// hash follows symbolic refs (HEAD -> refs/heads/main) to a hash.
func (l refList) hash(name string, depth int) (string, bool) {
	ref, ok := l[name]
	if !ok || depth > 5 {
		return "", false
	}
	if ref.Type() == plumbing.SymbolicReference {
		return l.hash(ref.Target().String(), depth+1)
	}
	return ref.Hash().String(), true
}

func (l refList) branches() []string { return l.names("refs/heads/") }
func (l refList) tags() []string     { return l.names("refs/tags/") }

func (l refList) names(prefix string) []string {
	var out []string
	for name := range l {
		if strings.HasPrefix(name, prefix) && !strings.HasSuffix(name, "^{}") {
			out = append(out, strings.TrimPrefix(name, prefix))
		}
	}
	return out
}

// listRefs returns the repository's refs, from the shared listing when
// younger than ttl (unless force), else from the ls-remote in flight or a
// new one (package listing).
func (r *Repos) listRefs(ctx context.Context, repoURL string, force bool, ttl time.Duration) (refList, error) {
	return r.refs.Get(ctx, NormalizeURL(repoURL), listing.Want{MaxAge: ttl, Force: force}, r.opts.LsRemoteTimeout,
		func(ctx context.Context) (refList, error) { return r.lsRemote(ctx, repoURL) })
}

func (r *Repos) lsRemote(ctx context.Context, repoURL string) (refList, error) {
	if err := checkScheme(repoURL); err != nil {
		return nil, err
	}
	if err := r.checkHost(ctx, repoURL); err != nil {
		return nil, err
	}
	auth, err := r.auth(repoURL)
	if err != nil {
		return nil, err
	}
	tlsOpts, err := r.tlsOptions(repoURL)
	if err != nil {
		return nil, err
	}
	r.statsFor(repoURL).lsRemote.Add(1)
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	start := time.Now()
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled,
		CABundle: tlsOpts.CABundle, ClientCert: tlsOpts.ClientCert, ClientKey: tlsOpts.ClientKey})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		r.observe("ls-remote", start, nil)
	} else {
		r.observe("ls-remote", start, err)
	}
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return refList{}, nil
		}
		return nil, fmt.Errorf("ls-remote: %w", withHint(redactErr(err, repoURL)))
	}
	out := make(refList, len(refs))
	for _, ref := range refs {
		out[ref.Name().String()] = ref
	}
	return out, nil
}

func isFullSHA(s string) bool { return len(s) == 40 && isHex(s) }

// isShortSHA accepts 7 to 39 hex digits, as git abbreviates to 7 at least.
func isShortSHA(s string) bool { return len(s) >= 7 && len(s) < 40 && isHex(s) }

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// Refs is one listing of a repository's branches and tags.
type Refs struct {
	// Head is the branch HEAD names (refs/heads/main); "" when the server
	// does not say.
	Head string
	// Commits are each branch's and tag's commit, by full ref name (an
	// annotated tag's peeled).
	Commits map[string]string
}

// ListRefs lists the repository's refs with a new ls-remote, which the
// resolves of its revisions within RefsTTL then share.
func (r *Repos) ListRefs(ctx context.Context, repoURL string) (Refs, error) {
	l, err := r.listRefs(ctx, repoURL, true, r.opts.RefsTTL)
	if err != nil {
		return Refs{}, err
	}
	out := Refs{Commits: make(map[string]string, len(l))}
	if head, ok := l["HEAD"]; ok && head.Type() == plumbing.SymbolicReference {
		out.Head = head.Target().String()
	}
	for name := range l {
		if !strings.HasPrefix(name, "refs/heads/") && !strings.HasPrefix(name, "refs/tags/") || strings.HasSuffix(name, "^{}") {
			continue
		}
		if sha, ok := l.match(name); ok {
			out.Commits[name] = sha
		}
	}
	return out, nil
}
