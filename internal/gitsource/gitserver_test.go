package gitsource

import (
	"testing"

	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
)

// The tests of this package use gittest through these short names.
type (
	gitServer = gittest.Server
	workRepo  = gittest.WorkRepo
)

func newGitServer(t *testing.T) *gitServer { return gittest.NewServer(t) }

func runGit(t *testing.T, dir string, args ...string) string { return gittest.Run(t, dir, args...) }

func newRepos(t *testing.T, opts Options) *Repos {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
