package devenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// settleHead points HEAD of the bare repository dir at a branch the
// repository has, when HEAD names none: main if it exists, else the first
// branch by name. A hosted Git server (GitHub, Gitea) makes the first branch
// pushed into an empty repository its default branch the same way, so that
// a clone checks it out and `targetRevision: HEAD` resolves. A HEAD that
// names an existing branch, or a detached one, is left alone. It returns the
// branch HEAD now names, or "" when it changed nothing.
func settleHead(dir string) (string, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return "", err
	}
	head, err := repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if head.Type() != plumbing.SymbolicReference {
		return "", nil
	}
	if _, err := repo.Storer.Reference(head.Target()); !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", err // HEAD names a branch that exists (err == nil), or the repo cannot be read
	}
	iter, err := repo.Branches()
	if err != nil {
		return "", fmt.Errorf("list branches: %w", err)
	}
	var branches []plumbing.ReferenceName
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		branches = append(branches, r.Name())
		return nil
	})
	if len(branches) == 0 {
		return "", nil // still empty: the next push decides
	}
	slices.Sort(branches)
	pick := branches[0]
	if slices.Contains(branches, plumbing.Main) {
		pick = plumbing.Main
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, pick)); err != nil {
		return "", fmt.Errorf("point HEAD at %s: %w", pick, err)
	}
	return pick.Short(), nil
}

// settleHeads runs settleHead on every repository under the server's root:
// repos that an earlier stack (or `git init --bare` by hand) left with a
// HEAD that names no branch are fixed before anyone clones them.
func (g *gitServer) settleHeads() {
	_ = filepath.WalkDir(g.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || !strings.HasSuffix(path, ".git") {
			return nil
		}
		g.settleHeadLogged(path)
		return filepath.SkipDir
	})
}

// settleHeadLogged is settleHead with its outcome in the server's log.
func (g *gitServer) settleHeadLogged(dir string) {
	g.headMu.Lock()
	defer g.headMu.Unlock()
	name, _ := filepath.Rel(g.root, dir)
	branch, err := settleHead(dir)
	switch {
	case err != nil:
		fmt.Fprintf(g.log, "git server: %s: settle HEAD: %v\n", name, err)
	case branch != "":
		fmt.Fprintf(g.log, "git server: %s: HEAD named no branch: it now names %s\n", name, branch)
	}
}

// receivePack is the request of a push that carries the pack and updates
// the refs: POST <repo>.git/git-receive-pack.
var receivePack = regexp.MustCompile(`^/(.+\.git)/git-receive-pack$`)

// headFollowsPush settles HEAD after every push (settleHead). The answer is
// held back until HEAD is settled: a client that clones right after its
// push has finished finds HEAD naming the branch it pushed.
func (g *gitServer) headFollowsPush(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		m := receivePack.FindStringSubmatch(req.URL.Path)
		if m == nil || req.Method != http.MethodPost || strings.Contains(m[1], "..") {
			next.ServeHTTP(rw, req)
			return
		}
		held := &heldResponse{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(held, req)
		if dir := filepath.Join(g.root, filepath.FromSlash(m[1])); held.status == http.StatusOK && isDir(dir) {
			g.settleHeadLogged(dir)
		}
		for k, v := range held.header {
			rw.Header()[k] = v
		}
		rw.WriteHeader(held.status)
		_, _ = rw.Write(held.body.Bytes())
	})
}

// heldResponse keeps a whole answer in memory: a push's report is small.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header         { return h.header }
func (h *heldResponse) WriteHeader(status int)      { h.status = status }
func (h *heldResponse) Write(b []byte) (int, error) { return h.body.Write(b) }

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
