package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// gitServer serves DIR/git/<name>.git over Git's smart HTTP protocol, fetch
// and push, by running `git http-backend` through net/http/cgi. It lives in
// the process that owns the Stack.
type gitServer struct {
	root   string // GIT_PROJECT_ROOT
	git    string // path of the git binary
	url    string
	log    *os.File // DIR/logs/git.log: requests and git http-backend's stderr
	server *http.Server
	done   chan error
	headMu sync.Mutex // one settleHead at a time
}

func startGitServer(stateDir string) (*gitServer, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git is not installed (apt-get install -y git): %w", err)
	}
	root := filepath.Join(stateDir, "git")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("git server: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(stateDir, "logs", "git.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("git server: open its log: %w", err)
	}
	// The listener stays open from here on: no other process can take the port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("git server: listen on a loopback port: %w", err)
	}
	handler := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Root: "/",
		Dir:  root,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			// Pushes work for every repo under the root, also one made by
			// hand with `git init --bare`.
			"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=http.receivepack",
			"GIT_CONFIG_VALUE_0=true",
			// Neither the user's nor the machine's git config may change
			// what the server does.
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + root,
		},
		Stderr: logFile,
	}
	g := &gitServer{
		root: root,
		git:  gitBin,
		url:  "http://" + ln.Addr().String(),
		log:  logFile,
		done: make(chan error, 1),
	}
	g.server = &http.Server{
		Handler:           logRequests(logFile, g.createOnPush(g.headFollowsPush(handler))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	g.settleHeads()
	go func() { g.done <- g.server.Serve(ln) }()
	return g, nil
}

// repoName is what CreateRepo accepts: a path of simple segments, such as
// "demo" or "team/demo".
var repoName = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

// createRepo makes an empty bare repository that accepts pushes over HTTP.
func (g *gitServer) createRepo(ctx context.Context, name string) (string, error) {
	name = strings.TrimSuffix(name, ".git")
	if !repoName.MatchString(name) || strings.Contains(name, "..") {
		return "", fmt.Errorf("create git repo %q: the name must be path segments of letters, digits, '.', '_' and '-'", name)
	}
	dir := filepath.Join(g.root, name+".git")
	if _, err := os.Stat(dir); err == nil {
		return "", fmt.Errorf("create git repo %q: %s already exists", name, dir)
	}
	for _, args := range [][]string{
		{"init", "--bare", "--quiet", "--initial-branch=main", dir},
		{"-C", dir, "config", "http.receivepack", "true"},
	} {
		cmd := exec.CommandContext(ctx, g.git, args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("create git repo %q: git %s: %w: %s", name, strings.Join(args, " "), err, out)
		}
	}
	return g.url + "/" + name + ".git", nil
}

// receivePackRefs is the first request of a push: GET <repo>.git/info/refs?service=git-receive-pack.
var receivePackRefs = regexp.MustCompile(`^/(.+)\.git/info/refs$`)

// createOnPush creates a missing repository when a push begins, so that
// `git push FERRY_GIT_URL/new.git main` just works. Its HEAD names main
// until the first push names another branch (headFollowsPush).
func (g *gitServer) createOnPush(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if m := receivePackRefs.FindStringSubmatch(req.URL.Path); m != nil && req.URL.Query().Get("service") == "git-receive-pack" {
			if _, err := os.Stat(filepath.Join(g.root, m[1]+".git")); errors.Is(err, os.ErrNotExist) {
				if _, err := g.createRepo(req.Context(), m[1]); err != nil {
					if _, statErr := os.Stat(filepath.Join(g.root, m[1]+".git")); statErr != nil {
						http.Error(rw, err.Error(), http.StatusBadRequest)
						return
					}
				}
			}
		}
		next.ServeHTTP(rw, req)
	})
}

func (g *gitServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := g.server.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = g.server.Close()
	}
	if serveErr := <-g.done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("git server: %w", serveErr))
	}
	return errors.Join(err, g.log.Close())
}

// logRequests writes one line per request: enough to see who fetched or
// pushed what when a test fails.
func logRequests(w io.Writer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		rec := &statusRecorder{ResponseWriter: rw, status: http.StatusOK}
		began := time.Now()
		next.ServeHTTP(rec, req)
		fmt.Fprintf(w, "%s %s %s?%s %d %s\n", began.Format(time.RFC3339), req.Method, req.URL.Path, req.URL.RawQuery, rec.status, since(began))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
