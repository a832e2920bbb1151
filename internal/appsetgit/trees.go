// Package appsetgit reads the commits of Git repositories that an
// ApplicationSet's git generators walk: the appset.Source of one
// generation, over the clones and refs cache of gitsource that every app
// of a repository shares.
//
//	src := &appsetgit.Trees{Repos: repos}
//	defer src.Release()
//	res, err := appset.Generate(ctx, set, appset.Options{Source: src})
package appsetgit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// Trees is the Source of one generation: each (repo, revision) is
// resolved through the refs cache every app of the repo shares and checked
// out from the shared clone once, and released when the generation ends
// (Release).
type Trees struct {
	Repos *gitsource.Repos
	// Fresh lists the refs anew; otherwise the shared refs cache may
	// answer, MaxAge old at most when MaxAge is set.
	Fresh  bool
	MaxAge time.Duration

	mu        sync.Mutex
	trees     map[string]*checkedOut
	releases  []func()
	revisions []Revision
}

var _ appset.Source = (*Trees)(nil)

// Revision is a commit a generation read.
type Revision struct {
	RepoURL, Revision, SHA string
}

// gitError marks a failure to read Git (which a retry may fix) from a
// generator or template that cannot run (which no retry fixes).
type gitError struct{ err error }

func (e *gitError) Error() string { return e.err.Error() }
func (e *gitError) Unwrap() error { return e.err }

func (g *Trees) Tree(ctx context.Context, repoURL, revision string) (appset.Tree, error) {
	revision = cmp.Or(revision, app.DefaultTargetRevision)
	key := repoURL + "\x00" + revision
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.trees[key]; ok {
		return t, nil
	}
	var opts []gitsource.ResolveOption
	switch {
	case g.Fresh:
		opts = append(opts, gitsource.ForceRefresh())
	case g.MaxAge > 0:
		opts = append(opts, gitsource.MaxAge(g.MaxAge))
	}
	sha, err := g.Repos.Resolve(ctx, repoURL, revision, opts...)
	if err != nil {
		return nil, &gitError{err}
	}
	dir, release, err := g.Repos.Checkout(ctx, repoURL, sha)
	if err != nil {
		return nil, &gitError{err}
	}
	g.releases = append(g.releases, release)
	t, err := walkTree(dir)
	if err != nil {
		return nil, &gitError{fmt.Errorf("read %s at %s: %w", gitsource.RedactURL(repoURL), sha, err)}
	}
	if g.trees == nil {
		g.trees = map[string]*checkedOut{}
	}
	g.trees[key] = t
	g.revisions = append(g.revisions, Revision{RepoURL: repoURL, Revision: revision, SHA: sha})
	return t, nil
}

// Revisions are the commits read, in the order first read.
func (g *Trees) Revisions() []Revision {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.revisions)
}

// Release lets the checkouts go.
func (g *Trees) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.releases {
		r()
	}
	g.releases = nil
}

// checkedOut is a commit's files on disk, listed once.
type checkedOut struct {
	dir         string
	dirs, files []string
}

func walkTree(root string) (*checkedOut, error) {
	t := &checkedOut{dir: root}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		switch {
		case e.IsDir() && strings.HasPrefix(e.Name(), "."):
			return filepath.SkipDir
		case e.IsDir():
			t.dirs = append(t.dirs, rel)
		case e.Type().IsRegular():
			t.files = append(t.files, rel)
		}
		return nil
	})
	return t, err
}

func (t *checkedOut) Dirs() []string  { return t.dirs }
func (t *checkedOut) Files() []string { return t.files }

// maxGeneratorFile bounds a git files generator's file: parameters, not
// manifests.
const maxGeneratorFile = 1 << 20

func (t *checkedOut) ReadFile(name string) ([]byte, error) {
	p := filepath.Join(t.dir, filepath.FromSlash(name))
	if !strings.HasPrefix(p, t.dir+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is outside the repository", name)
	}
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if info.Size() > maxGeneratorFile {
		return nil, fmt.Errorf("%s is larger than %d bytes: a generator's file holds parameters, not manifests", name, maxGeneratorFile)
	}
	return os.ReadFile(p)
}

// IsGitError reports whether err is a failure to read Git.
func IsGitError(err error) bool {
	var ge *gitError
	return errors.As(err, &ge)
}
