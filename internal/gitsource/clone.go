package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// fetchRefSpecs bring every branch and tag: a SHA that Resolve returned is
// the tip of one of them, or an ancestor.
var fetchRefSpecs = []config.RefSpec{
	"+refs/heads/*:refs/remotes/origin/*",
	"+refs/tags/*:refs/tags/*",
}

// clone is the local bare repository of one remote, in
// CacheDir/clones/<urlHash>. Its fields other than dir are guarded by mu,
// the per-repository lock held for every fetch and export; users and
// lastUsed are guarded by Repos.clonesMu.
type clone struct {
	dir string

	mu   sync.Mutex
	repo *git.Repository

	users    int
	lastUsed time.Time
}

// acquireClone returns the repository's clone, counted as in use until
// releaseClone, so that eviction leaves it alone.
func (r *Repos) acquireClone(repoURL string) *clone {
	h := urlHash(repoURL)
	r.clonesMu.Lock()
	defer r.clonesMu.Unlock()
	c := r.clones[h]
	if c == nil {
		c = &clone{dir: filepath.Join(r.clonesAt, h)}
		r.clones[h] = c
	}
	c.users++
	c.lastUsed = time.Now()
	return c
}

// touchClone counts the repository's clone, if there is one, as used now.
func (r *Repos) touchClone(repoURL string) {
	r.clonesMu.Lock()
	defer r.clonesMu.Unlock()
	if c := r.clones[urlHash(repoURL)]; c != nil {
		c.lastUsed = time.Now()
	}
}

func (r *Repos) releaseClone(c *clone) {
	r.clonesMu.Lock()
	defer r.clonesMu.Unlock()
	c.users--
	c.lastUsed = time.Now()
	r.evictLocked()
}

// evictLocked removes the least recently used clones nobody is using until
// at most MaxClones remain.
func (r *Repos) evictLocked() {
	if r.opts.MaxClones < 0 || len(r.clones) <= r.opts.MaxClones {
		return
	}
	type idle struct {
		hash string
		c    *clone
	}
	var idles []idle
	for h, c := range r.clones {
		if c.users == 0 {
			idles = append(idles, idle{h, c})
		}
	}
	sort.Slice(idles, func(i, j int) bool { return idles[i].c.lastUsed.Before(idles[j].c.lastUsed) })
	for _, v := range idles {
		if len(r.clones) <= r.opts.MaxClones {
			return
		}
		delete(r.clones, v.hash)
		if err := os.RemoveAll(v.c.dir); err != nil {
			r.log.Warn("git cache: evict clone", "dir", v.c.dir, "err", err)
			continue
		}
		r.log.Debug("git cache: evicted clone", "dir", v.c.dir)
	}
}

// adoptClones registers the clones an earlier process left, last used at
// their modification time, and evicts beyond MaxClones.
func (r *Repos) adoptClones() error {
	entries, err := os.ReadDir(r.clonesAt)
	if err != nil {
		return fmt.Errorf("git cache %s: %w", r.opts.CacheDir, err)
	}
	r.clonesMu.Lock()
	defer r.clonesMu.Unlock()
	for _, e := range entries {
		dir := filepath.Join(r.clonesAt, e.Name())
		if !e.IsDir() || len(e.Name()) != 64 || !isHex(e.Name()) {
			_ = os.RemoveAll(dir) // not ours: an interrupted wipe, or junk
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		r.clones[e.Name()] = &clone{dir: dir, lastUsed: info.ModTime()}
	}
	r.evictLocked()
	return nil
}

// open opens the clone, creating it when missing; a directory that does not
// open as a repository is removed and created again. Each operation opens
// afresh, so that nothing cached in memory hides a clone changed on disk.
// Callers hold c.mu.
//
// Its storage refuses objects larger than the limit as a pack arrives, and
// reads large objects as streams (see limitedStorage).
func (c *clone) open(displayURL string, opts *Options) (*git.Repository, error) {
	c.repo = nil
	repo, err := c.openStorage(opts)
	if err != nil {
		if err := os.RemoveAll(c.dir); err != nil {
			return nil, err
		}
		if repo, err = git.PlainInit(c.dir, true); err != nil {
			return nil, err
		}
		// The remote's URL is only a label: fetches pass the real one, so
		// credentials in a URL are never written to disk.
		if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{displayURL}}); err != nil {
			return nil, err
		}
		if repo, err = c.openStorage(opts); err != nil {
			return nil, err
		}
	}
	c.repo = repo
	_ = os.Chtimes(c.dir, time.Now(), time.Now()) // last use survives a restart
	return repo, nil
}

func (c *clone) openStorage(opts *Options) (*git.Repository, error) {
	if _, err := os.Stat(c.dir); err != nil {
		return nil, err
	}
	fs := osfs.New(c.dir)
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRUDefault(), filesystem.Options{LargeObjectThreshold: streamAbove})
	return git.Open(&limitedStorage{Storage: st, maxObject: opts.MaxFileBytes, flag: opts.FileFlag, dir: c.dir}, nil)
}

// wipe removes the clone from disk; the next open starts from nothing.
func (c *clone) wipe() error {
	c.repo = nil
	return os.RemoveAll(c.dir)
}

// hasCommit reports whether the commit and its tree are in the clone.
func (c *clone) hasCommit(sha plumbing.Hash) bool {
	commit, err := c.repo.CommitObject(sha)
	if err != nil {
		return false
	}
	_, err = commit.Tree()
	return err == nil
}

// intact reports whether every ref of the clone points to an object that is
// there; a clone whose objects were deleted fails it.
func (c *clone) intact() bool {
	if c.repo == nil {
		return true
	}
	refs, err := c.repo.References()
	if err != nil {
		return false
	}
	ok := true
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		if _, err := c.repo.Storer.EncodedObject(plumbing.AnyObject, ref.Hash()); err != nil {
			ok = false
			return storer.ErrStop
		}
		return nil
	})
	return ok
}

// fetch brings every branch and tag of the remote into the clone.
func (r *Repos) fetch(ctx context.Context, c *clone, repoURL string, specs []config.RefSpec) error {
	if err := checkScheme(repoURL); err != nil {
		return err
	}
	if err := r.checkHost(ctx, repoURL); err != nil {
		return err
	}
	auth, err := r.auth(repoURL)
	if err != nil {
		return err
	}
	tlsOpts, err := r.tlsOptions(repoURL)
	if err != nil {
		return err
	}
	r.statsFor(repoURL).fetch.Add(1)
	start := time.Now()
	err = c.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteURL: repoURL,
		RefSpecs:  specs,
		Auth:      auth,
		Tags:      git.NoTags,
		Force:     true,
		CABundle:  tlsOpts.CABundle, ClientCert: tlsOpts.ClientCert, ClientKey: tlsOpts.ClientKey,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		r.observe("fetch", start, nil)
	} else {
		r.observe("fetch", start, err)
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch: %w", withHint(redactErr(err, repoURL)))
	}
	return nil
}

// ensureCommit makes sure the commit is in the clone, fetching only when it
// is not. Callers hold c.mu.
func (r *Repos) ensureCommit(ctx context.Context, c *clone, repoURL string, sha plumbing.Hash) error {
	if _, err := c.open(RedactURL(repoURL), &r.opts); err != nil {
		return fmt.Errorf("open clone: %w", err)
	}
	if c.hasCommit(sha) {
		return nil
	}
	if err := r.fetch(ctx, c, repoURL, fetchRefSpecs); IsLimit(err) {
		// Another branch or tag may hold the file too large to fetch:
		// the refs at the commit may still come alone.
		return r.fetchRefsAt(ctx, c, repoURL, sha, err)
	} else if err != nil {
		return err
	}
	if c.hasCommit(sha) {
		return nil
	}
	// Not reachable from a branch or tag: fetch it through a ref of this
	// repository that points at it (a pull request ref, say), never by its
	// SHA alone. A server that shares objects between repositories (a
	// GitHub fork network) would send another repository's commit for it.
	ref, err := r.refPointingAt(ctx, repoURL, sha)
	if err != nil {
		return err
	}
	if ref != "" {
		spec := config.RefSpec(fmt.Sprintf("+%s:refs/ferry/%s", ref, sha))
		if err := r.fetch(ctx, c, repoURL, []config.RefSpec{spec}); err == nil && c.hasCommit(sha) {
			return nil
		}
	}
	return &CommitNotFoundError{RepoURL: RedactURL(repoURL), SHA: sha.String()}
}

// refPointingAt is a ref of the repository (by its shared listing) whose
// commit is sha, or "" when none is.
func (r *Repos) refPointingAt(ctx context.Context, repoURL string, sha plumbing.Hash) (string, error) {
	refs, err := r.listRefs(ctx, repoURL, false, r.opts.RefsTTL)
	if err != nil {
		return "", fmt.Errorf("list the refs of %s: %w", RedactURL(repoURL), err)
	}
	var names []string
	for name := range refs {
		if got, ok := refs.hash(name, 0); ok && got == sha.String() && strings.HasPrefix(name, "refs/") {
			names = append(names, strings.TrimSuffix(name, "^{}"))
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	sort.Strings(names)
	return names[0], nil
}

// fetchRefsAt fetches only the branches and tags whose tip is sha, after
// a fetch of every ref failed with refused (a *LimitError), so that an
// oversized file on one branch does not stop the apps of the others. It
// returns refused when no ref points at sha or they bring the same refusal.
func (r *Repos) fetchRefsAt(ctx context.Context, c *clone, repoURL string, sha plumbing.Hash, refused error) error {
	refs, err := r.listRefs(ctx, repoURL, false, r.opts.RefsTTL)
	if err != nil {
		return refused
	}
	var specs []config.RefSpec
	others := 0 // branches and tags elsewhere, which the refused fetch brought too
	for name, ref := range refs {
		branch, isBranch := strings.CutPrefix(name, "refs/heads/")
		isTag := strings.HasPrefix(name, "refs/tags/")
		switch {
		case !isBranch && !isTag:
		case ref.Type() != plumbing.HashReference || ref.Hash() != sha:
			others++
		case isBranch:
			specs = append(specs, config.RefSpec("+"+name+":refs/remotes/origin/"+branch))
		default:
			specs = append(specs, config.RefSpec("+"+name+":"+name))
		}
	}
	if len(specs) == 0 || others == 0 {
		// No ref at the commit, or only refs at it: the refused fetch was
		// this one already.
		return refused
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i] < specs[j] })
	if err := r.fetch(ctx, c, repoURL, specs); err != nil {
		return err
	}
	if c.hasCommit(sha) {
		return nil
	}
	return refused
}

// withClone runs fn on the repository's clone under its lock. When fn fails
// for a reason that is not the network nor a genuinely missing commit, the
// clone is taken as corrupt: it is wiped and fn runs once more on a fresh one.
func (r *Repos) withClone(ctx context.Context, repoURL string, fn func(c *clone) error) error {
	c := r.acquireClone(repoURL)
	defer r.releaseClone(c)
	c.mu.Lock()
	defer c.mu.Unlock()

	err := fn(c)
	if err == nil || isTransportError(err) || IsLimit(err) || ctx.Err() != nil {
		return err
	}
	if IsNotFound(err) && c.intact() {
		return err
	}
	r.log.Warn("git cache: clone looks corrupt, cloning again", "repo", RedactURL(repoURL), "dir", c.dir, "err", err)
	if werr := c.wipe(); werr != nil {
		return fmt.Errorf("%w (and removing the clone failed: %v)", err, werr)
	}
	return fn(c)
}

// resolveShortSHA finds the commit a short SHA abbreviates, in the clone
// after a fetch. It returns plumbing.ErrReferenceNotFound when none does.
func (r *Repos) resolveShortSHA(ctx context.Context, repoURL, short string) (string, error) {
	var sha string
	err := r.withClone(ctx, repoURL, func(c *clone) error {
		if _, err := c.open(RedactURL(repoURL), &r.opts); err != nil {
			return fmt.Errorf("open clone: %w", err)
		}
		if err := r.fetch(ctx, c, repoURL, fetchRefSpecs); err != nil {
			return err
		}
		h, err := c.repo.ResolveRevision(plumbing.Revision(short))
		if errors.Is(err, plumbing.ErrReferenceNotFound) && c.intact() {
			return &RevisionNotFoundError{RepoURL: RedactURL(repoURL), Revision: short}
		}
		if err != nil {
			return err
		}
		sha = h.String()
		return nil
	})
	var notFound *RevisionNotFoundError
	if errors.As(err, &notFound) {
		return "", plumbing.ErrReferenceNotFound
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s revision %q: %w", RedactURL(repoURL), short, err)
	}
	return sha, nil
}
