package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gitRepo is a working copy whose main branch is pushed to a repo on the
// stack's Git server.
type gitRepo struct {
	Name string
	URL  string
	dir  string
}

// newRepo creates the repo on the Git server and an empty working copy.
func (e *Env) newRepo(ctx context.Context, name string) (*gitRepo, error) {
	url, err := e.Stack.CreateRepo(name)
	if err != nil {
		return nil, err
	}
	dir, err := e.tempDir("wc-" + strings.ReplaceAll(name, "/", "-"))
	if err != nil {
		return nil, err
	}
	r := &gitRepo{Name: name, URL: url, dir: dir}
	_, err = r.git(ctx, "init", "-q", "-b", "main")
	return r, err
}

func (r *gitRepo) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=ferry-bench", "-c", "user.email=bench@ferry.invalid"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), r.Name, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// write puts files (path → content) in the working copy.
func (r *gitRepo) write(files map[string]string) error {
	for p, content := range files {
		full := filepath.Join(r.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Path of a file or directory in the working copy.
func (r *gitRepo) Path(p string) string { return filepath.Join(r.dir, p) }

// commit is one pushed commit: its SHA, its parent and what it touched.
type commit struct {
	SHA, Parent string
	Paths       []string
}

// commitAndPush commits everything and pushes main.
func (r *gitRepo) commitAndPush(ctx context.Context, msg string) (commit, error) {
	var c commit
	c.Parent, _ = r.git(ctx, "rev-parse", "--verify", "-q", "HEAD")
	if _, err := r.git(ctx, "add", "-A"); err != nil {
		return c, err
	}
	if _, err := r.git(ctx, "commit", "-q", "-m", msg); err != nil {
		return c, err
	}
	if _, err := r.git(ctx, "push", "-q", r.URL, "HEAD:refs/heads/main"); err != nil {
		return c, err
	}
	sha, err := r.git(ctx, "rev-parse", "HEAD")
	if err != nil {
		return c, err
	}
	c.SHA = sha
	if c.Parent != "" {
		out, err := r.git(ctx, "diff", "--name-only", c.Parent, sha)
		if err != nil {
			return c, err
		}
		c.Paths = strings.Fields(out)
	}
	return c, nil
}

// sizedRepo is a repo whose app/ holds n resources (resourceFiles at rev 0).
type sizedRepo struct {
	*gitRepo
	Commit commit
	N      int
}

// sizedRepo returns the stack's repo of n resources, pushing it the first
// time: scenarios of the same size share it (and its rendered manifests).
func (e *Env) sizedRepo(ctx context.Context, n int) (*sizedRepo, error) {
	if r, ok := e.repos[n]; ok {
		return r, nil
	}
	repo, err := e.newRepo(ctx, fmt.Sprintf("app-%d", n))
	if err != nil {
		return nil, err
	}
	if err := repo.write(resourceFiles("app", n, 0)); err != nil {
		return nil, err
	}
	c, err := repo.commitAndPush(ctx, fmt.Sprintf("%d resources", n))
	if err != nil {
		return nil, err
	}
	if e.repos == nil {
		e.repos = map[int]*sizedRepo{}
	}
	r := &sizedRepo{gitRepo: repo, Commit: c, N: n}
	e.repos[n] = r
	return r, nil
}

// pushRev writes revision i of the push scenario's app and pushes it.
func (r *gitRepo) pushRev(ctx context.Context, i int) (commit, error) {
	if err := r.write(resourceFiles("app", pushResources, i)); err != nil {
		return commit{}, err
	}
	return r.commitAndPush(ctx, fmt.Sprintf("rev %d", i))
}
