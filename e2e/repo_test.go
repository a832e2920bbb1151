package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitRepo is a working copy pushed to a repo on the stack's Git server.
type gitRepo struct {
	t    *testing.T
	dir  string
	URL  string
	Name string
}

func newRepo(t *testing.T, name string) *gitRepo {
	t.Helper()
	url, err := stack.CreateRepo(name)
	require.NoError(t, err)
	r := &gitRepo{t: t, dir: t.TempDir(), URL: url, Name: name}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=ferry-e2e", "-c", "user.email=e2e@ferry.invalid"}, args...)...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// write puts files (path -> content) in the working copy.
func (r *gitRepo) write(files map[string]string) {
	r.t.Helper()
	for p, content := range files {
		full := filepath.Join(r.dir, p)
		require.NoError(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(r.t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// copyDir copies a directory of the shared corpus into the working copy.
func (r *gitRepo) copyDir(src, dst string) {
	r.t.Helper()
	require.NoError(r.t, os.CopyFS(filepath.Join(r.dir, dst), os.DirFS(src)))
}

// commitAndPush commits everything and pushes main; it returns the new SHA.
func (r *gitRepo) commitAndPush(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	r.git("push", "-q", r.URL, "HEAD:refs/heads/main")
	return r.git("rev-parse", "HEAD")
}
