package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/treearchive"
	"github.com/go-git/go-git/v5/plumbing"
)

// tree is one commit's files on disk, shared by every holder until the last
// one releases it. Each tree has a directory of its own, so the removal of
// a released tree never races with a new checkout of the same commit.
type tree struct {
	dir   string        // set by the creator before ready is closed
	ready chan struct{} // closed once dir is written or err is set
	err   error
	users int // guarded by Repos.treesMu
	// releases counts the times its last holder released it (under
	// Repos.treesMu): only the latest release's linger removes it.
	releases int
}

// Checkout returns a directory holding the files of commit sha (40 hex, as
// Resolve returns) of the repository. The directory is shared with other
// holders of the same commit: callers must treat it as read-only. It stays
// valid until release is called; release is idempotent.
//
// The commit comes from the repository's clone, fetched only when the
// commit is not there yet. A missing or corrupt clone is cloned again.
func (r *Repos) Checkout(ctx context.Context, repoURL, sha string) (dir string, release func(), err error) {
	if !isFullSHA(sha) {
		return "", nil, fmt.Errorf("checkout %s: %q is not a full commit SHA; resolve the revision first", RedactURL(repoURL), sha)
	}
	sha = strings.ToLower(sha)
	key := urlHash(repoURL)[:32] + "-" + sha

	r.treesMu.Lock()
	t := r.trees[key]
	creator := t == nil
	if creator {
		t = &tree{ready: make(chan struct{})}
		r.trees[key] = t
	}
	t.users++
	r.treesMu.Unlock()
	if !creator {
		// The clone's use, for its eviction, as if the tree came from it.
		r.touchClone(repoURL)
	}

	var once sync.Once
	release = func() { once.Do(func() { r.releaseTree(key, t) }) }

	if creator {
		t.dir, t.err = r.materialise(ctx, repoURL, plumbing.NewHash(sha), key)
		if t.err != nil {
			r.treesMu.Lock()
			delete(r.trees, key) // the next caller tries again
			r.treesMu.Unlock()
		}
		close(t.ready)
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		release()
		return "", nil, fmt.Errorf("checkout %s commit %s: %w", RedactURL(repoURL), sha, ctx.Err())
	}
	if t.err != nil {
		release()
		return "", nil, t.err
	}
	return t.dir, release, nil
}

// treeLinger is how long a tree no one holds stays for the next holder
// of the same commit: the apps of one repository render a commit one after
// another, and each would write the whole tree out again (and the render
// sandbox that rendered it could not serve the next, which it knows by its
// directory).
var treeLinger = 10 * time.Second

func (r *Repos) releaseTree(key string, t *tree) {
	r.treesMu.Lock()
	t.users--
	last := t.users == 0
	if last {
		t.releases++
	}
	release := t.releases
	r.treesMu.Unlock()
	if !last || t.dir == "" {
		return
	}
	time.AfterFunc(treeLinger, func() {
		r.treesMu.Lock()
		gone := t.users == 0 && t.releases == release && r.trees[key] == t
		if gone {
			delete(r.trees, key)
		}
		r.treesMu.Unlock()
		if gone {
			if err := r.removeTree(t.dir); err != nil {
				r.log.Warn("git cache: remove tree", "dir", t.dir, "err", err)
			}
			if err := os.Remove(treearchive.Path(t.dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				r.log.Warn("git cache: remove tree's archive", "dir", t.dir, "err", err)
			}
		}
	})
}

// materialise writes the commit's files to a new directory named after
// key and returns it. Only the tree's holders ever see it, once it is whole.
func (r *Repos) materialise(ctx context.Context, repoURL string, sha plumbing.Hash, key string) (string, error) {
	var dir string
	err := r.withClone(ctx, repoURL, func(c *clone) error {
		if err := r.ensureCommit(ctx, c, repoURL, sha); err != nil {
			return err
		}
		tmp, err := os.MkdirTemp(r.treesAt, key+"-")
		if err != nil {
			return err
		}
		// As readable as the clones beside it: a render sandbox reads the
		// tree as an unprivileged user.
		if err := os.Chmod(tmp, 0o755); err != nil {
			_ = os.RemoveAll(tmp)
			return err
		}
		if err := c.export(ctx, sha, tmp, &r.opts); err != nil {
			_ = os.RemoveAll(tmp)
			return err
		}
		dir = tmp
		return nil
	})
	if err != nil {
		if IsNotFound(err) {
			return "", err
		}
		return "", fmt.Errorf("checkout %s commit %s: %w", RedactURL(repoURL), sha, err)
	}
	return dir, nil
}
