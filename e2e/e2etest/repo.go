package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Repo is a working copy whose commits go to a repo on the stack's Git
// server.
type Repo struct {
	t    testing.TB
	Dir  string
	URL  string
	Name string
}

// NewRepo creates the repo name on the stack's Git server and an empty
// working copy for it on branch main.
func (e *Env) NewRepo(t testing.TB, name string) *Repo {
	t.Helper()
	url, err := e.Stack.CreateRepo(name)
	require.NoError(t, err)
	r := &Repo{t: t, Dir: t.TempDir(), URL: url, Name: name}
	r.Git("init", "-q", "-b", "main")
	return r
}

// Git runs git in the working copy and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=ferry-e2e", "-c", "user.email=e2e@ferry.invalid"}, args...)...)
	cmd.Dir = r.Dir
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// Write puts files (path -> content) in the working copy.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for p, content := range files {
		full := filepath.Join(r.Dir, p)
		require.NoError(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(r.t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// CopyDir copies the directory src into the working copy as dst.
func (r *Repo) CopyDir(src, dst string) {
	r.t.Helper()
	require.NoError(r.t, os.CopyFS(filepath.Join(r.Dir, dst), os.DirFS(src)))
}

// CommitAndPush commits everything and pushes main; it returns the new SHA.
func (r *Repo) CommitAndPush(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "-m", msg)
	r.Git("push", "-q", r.URL, "HEAD:refs/heads/main")
	return r.Git("rev-parse", "HEAD")
}
