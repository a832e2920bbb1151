package e2e

import (
	"testing"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// gitRepo is a working copy pushed to a repo on the stack's Git server.
type gitRepo struct{ *e2etest.Repo }

func newRepo(t *testing.T, name string) *gitRepo {
	t.Helper()
	return &gitRepo{testEnv().NewRepo(t, name)}
}

func (r *gitRepo) git(args ...string) string { return r.Git(args...) }

// write puts files (path -> content) in the working copy.
func (r *gitRepo) write(files map[string]string) { r.Write(files) }

// copyDir copies a directory of the shared corpus into the working copy.
func (r *gitRepo) copyDir(src, dst string) { r.CopyDir(src, dst) }

// commitAndPush commits everything and pushes main; it returns the new SHA.
func (r *gitRepo) commitAndPush(msg string) string { return r.CommitAndPush(msg) }
