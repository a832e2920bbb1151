package gitsource

import (
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// gitServer serves the bare repositories under root over smart HTTP with
// the machine's git http-backend, as a real Git host would.
type gitServer struct {
	root     string
	srv      *httptest.Server
	listings atomic.Int64 // GET info/refs for upload-pack: one per ls-remote or fetch
	user     string       // when set, basic auth user:pass is required
	pass     string
}

func newGitServer(t *testing.T) *gitServer {
	t.Helper()
	execPath := strings.TrimSpace(runGit(t, "", "--exec-path"))
	s := &gitServer{root: t.TempDir()}
	backend := &cgi.Handler{
		Path:   filepath.Join(execPath, "git-http-backend"),
		Root:   "/",
		Env:    []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s.user != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != s.user || p != s.pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if strings.HasSuffix(req.URL.Path, "/info/refs") && req.URL.Query().Get("service") == "git-upload-pack" {
			s.listings.Add(1)
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// url is the HTTP URL of repository name (served from root/name.git).
func (s *gitServer) url(name string) string { return s.srv.URL + "/" + name + ".git" }

// newRepo creates an empty bare repository on the server and a work tree
// that pushes to it.
func (s *gitServer) newRepo(t *testing.T, name string) *workRepo {
	t.Helper()
	bare := filepath.Join(s.root, name+".git")
	runGit(t, "", "init", "--quiet", "--bare", "--initial-branch=main", bare)
	dir := t.TempDir()
	runGit(t, dir, "init", "--quiet", "--initial-branch=main")
	runGit(t, dir, "remote", "add", "origin", bare)
	return &workRepo{t: t, dir: dir, bare: bare}
}

type workRepo struct {
	t    *testing.T
	dir  string
	bare string
}

// commit writes files (an empty content deletes the file), commits them on
// the current branch and returns the commit's SHA.
func (w *workRepo) commit(msg string, files map[string]string) string {
	w.t.Helper()
	for name, content := range files {
		p := filepath.Join(w.dir, filepath.FromSlash(name))
		if content == "" {
			_ = os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	runGit(w.t, w.dir, "add", "-A")
	runGit(w.t, w.dir, "commit", "--quiet", "--allow-empty", "-m", msg)
	return w.head()
}

func (w *workRepo) head() string {
	return strings.TrimSpace(runGit(w.t, w.dir, "rev-parse", "HEAD"))
}

func (w *workRepo) git(args ...string) string { return runGit(w.t, w.dir, args...) }

// push pushes every branch and tag, forcing.
func (w *workRepo) push() {
	w.t.Helper()
	runGit(w.t, w.dir, "push", "--quiet", "--force", "origin", "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*")
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Ferry Test", "GIT_AUTHOR_EMAIL=test@ferry.invalid",
		"GIT_COMMITTER_NAME=Ferry Test", "GIT_COMMITTER_EMAIL=test@ferry.invalid",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

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
