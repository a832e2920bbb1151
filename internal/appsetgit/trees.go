package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// gitTrees is the Source of one generation: each (repo, revision) is
// resolved through the refs cache every app of the repo shares and checked
// out from the shared clone once, and released when the generation ends.
type gitTrees struct {
	repos  *gitsource.Repos
	fresh  bool
	maxAge time.Duration

	mu        sync.Mutex
	trees     map[string]*checkedOut
	releases  []func()
	revisions []contract.RepoRevision
}

var _ appset.Source = (*gitTrees)(nil)

// gitError marks a failure to read Git, which classify judges, from a
// generator or template that cannot run, which no retry fixes.
type gitError struct{ err error }

func (e *gitError) Error() string { return e.err.Error() }
func (e *gitError) Unwrap() error { return e.err }

func (g *gitTrees) Tree(ctx context.Context, repoURL, revision string) (appset.Tree, error) {
	revision = cmp.Or(revision, app.DefaultTargetRevision)
	key := repoURL + "\x00" + revision
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.trees[key]; ok {
		return t, nil
	}
	var opts []gitsource.ResolveOption
	switch {
	case g.fresh:
		opts = append(opts, gitsource.ForceRefresh())
	case g.maxAge > 0:
		opts = append(opts, gitsource.MaxAge(g.maxAge))
	}
	sha, err := g.repos.Resolve(ctx, repoURL, revision, opts...)
	if err != nil {
		return nil, &gitError{err}
	}
	dir, release, err := g.repos.Checkout(ctx, repoURL, sha)
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
	g.revisions = append(g.revisions, contract.RepoRevision{RepoURL: repoURL, Revision: revision, SHA: sha})
	return t, nil
}

func (g *gitTrees) release() {
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

func isGitError(err error) bool {
	var ge *gitError
	return errors.As(err, &ge)
}
