package devenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGitServerHeadNamesThePushedBranch: the repos of the stack's Git
// server behave as a hosted Git server's do: HEAD names the branch that
// the first push brought (main when it brought several), so that `git
// clone` checks it out and HEAD resolves; a later push leaves it alone. A
// repo whose HEAD names no branch, made by hand or by an earlier stack, is
// fixed by the next push, or when the server starts.
func TestGitServerHeadNamesThePushedBranch(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(stateDir, "logs"), 0o755))
	root := filepath.Join(stateDir, "git")
	work := t.TempDir()

	// Left by an earlier stack: `git init --bare` (HEAD names master), main pushed.
	old := filepath.Join(root, "old.git")
	runGit(t, "", "init", "-q", "--bare", "--initial-branch=master", old)
	src := newWorkRepo(t, filepath.Join(work, "src"), "main")
	runGit(t, src, "push", "-q", old, "main")
	require.Equal(t, "refs/heads/master", strings.TrimSpace(runGit(t, old, "symbolic-ref", "HEAD")))

	g, err := startGitServer(stateDir)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.stop()) })

	t.Run("a repo left with a dangling HEAD is fixed when the server starts", func(t *testing.T) {
		require.Equal(t, "main", clonedBranch(t, g.url+"/old.git", filepath.Join(work, "old")))
	})

	t.Run("the first push into a new repo names HEAD", func(t *testing.T) {
		repo := newWorkRepo(t, filepath.Join(work, "trunk-src"), "trunk")
		runGit(t, repo, "push", "-q", g.url+"/trunk.git", "trunk")
		require.Equal(t, "trunk", clonedBranch(t, g.url+"/trunk.git", filepath.Join(work, "trunk")))
		require.Equal(t, "ref: refs/heads/trunk\tHEAD", symref(t, g.url+"/trunk.git"))

		// A later push of main does not move HEAD: the first push chose.
		runGit(t, repo, "push", "-q", g.url+"/trunk.git", "trunk:main")
		require.Equal(t, "ref: refs/heads/trunk\tHEAD", symref(t, g.url+"/trunk.git"))
	})

	t.Run("a first push of several branches names main", func(t *testing.T) {
		repo := newWorkRepo(t, filepath.Join(work, "several-src"), "main")
		runGit(t, repo, "branch", "aaa")
		runGit(t, repo, "push", "-q", g.url+"/several.git", "aaa", "main")
		require.Equal(t, "main", clonedBranch(t, g.url+"/several.git", filepath.Join(work, "several")))
	})

	t.Run("a repo made by hand with git init --bare", func(t *testing.T) {
		runGit(t, "", "init", "-q", "--bare", "--initial-branch=master", filepath.Join(root, "byhand.git"))
		runGit(t, src, "push", "-q", g.url+"/byhand.git", "main")
		require.Equal(t, "main", clonedBranch(t, g.url+"/byhand.git", filepath.Join(work, "byhand")))
	})

	t.Run("a repo created empty names main until a push", func(t *testing.T) {
		url, err := g.createRepo(t.Context(), "empty")
		require.NoError(t, err)
		require.Empty(t, symref(t, url), "an empty repo advertises no HEAD")
		require.Equal(t, "refs/heads/main", strings.TrimSpace(runGit(t, filepath.Join(root, "empty.git"), "symbolic-ref", "HEAD")))
	})
}

// newWorkRepo makes a repo in dir with one commit on branch.
func newWorkRepo(t *testing.T, dir, branch string) string {
	t.Helper()
	runGit(t, "", "init", "-q", "--initial-branch="+branch, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("kind: ConfigMap\n"), 0o644))
	runGit(t, dir, "add", "app.yaml")
	runGit(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// clonedBranch clones url into dir, as a user does, and returns the branch
// it checked out; the commit's file must be there.
func clonedBranch(t *testing.T, url, dir string) string {
	t.Helper()
	runGit(t, "", "clone", "-q", url, dir)
	require.FileExists(t, filepath.Join(dir, "app.yaml"), "the clone checked out a branch")
	return strings.TrimSpace(runGit(t, dir, "rev-parse", "--abbrev-ref", "HEAD"))
}

// symref is what `git ls-remote --symref url HEAD` says HEAD names.
func symref(t *testing.T, url string) string {
	t.Helper()
	for _, line := range strings.Split(runGit(t, "", "ls-remote", "--symref", url, "HEAD"), "\n") {
		if strings.HasPrefix(line, "ref: ") {
			return line
		}
	}
	return ""
}

// runGit runs the git CLI in dir, untouched by the user's git config.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}
