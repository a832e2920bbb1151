// Package scmtest is a loopback stand-in for the SCM providers' REST APIs
// (GitHub, GitLab, Gitea), for tests of the pullRequest and scmProvider
// generators that cannot reach the real services: one httptest server
// answers each provider's documented endpoints under its API prefix
// (GitHub Enterprise /api/v3, GitLab /api/v4, Gitea /api/v1) with the
// JSON their API documentation shows, over the repositories and pull
// requests a test puts in it. It pages as each provider does (Link,
// X-Next-Page), checks the token where each provider expects it, and
// records every request.
//
//	s := scmtest.New("s3cret")
//	defer s.Close()
//	s.AddRepo(scmtest.Repo{Owner: "acme", Name: "shop", DefaultBranch: "main", Branches: map[string]string{"main": sha}})
//	s.AddPull("acme/shop", scmtest.Pull{Number: 7, Branch: "feat", Target: "main", SHA: sha})
//	// api: s.URL (GitHub: s.URL, GitLab: s.URL, Gitea: s.URL)
package scmtest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
)

// Pull is a pull (merge) request of a repository.
type Pull struct {
	Number int64
	Title  string
	Branch string // head
	Target string // base
	SHA    string // head commit
	Author string
	Labels []string
	// Closed pull requests are listed only when asked for (GitLab's state).
	Closed bool
}

// Repo is a repository (GitLab: project) of an owner (organization, group).
type Repo struct {
	ID            int64
	Owner         string // GitLab: the group's full path
	Name          string
	DefaultBranch string
	Topics        []string
	Archived      bool
	// Branches maps each branch to its head commit.
	Branches map[string]string
	// Paths are the files and directories of every branch, slash-separated.
	Paths []string
}

func (r Repo) fullName() string { return r.Owner + "/" + r.Name }

// Request is one request the stand-in answered.
type Request struct {
	Method, Path string // Path as sent (escaped), from the host's root
	RawQuery     string
	// Authorization and PrivateToken are the headers that carry a token.
	Authorization, PrivateToken string
}

// Server is the stand-in.
type Server struct {
	*httptest.Server
	// Token the requests must carry, where each provider expects it;
	// empty: anonymous requests are answered.
	Token string

	mu    sync.Mutex
	repos []Repo
	pulls map[string][]Pull
	reqs  []Request
	// pageSize bounds every page; 0: as asked.
	pageSize int
	fail     int
	garbage  bool
}

// New starts a stand-in on loopback; Close stops it.
func New(token string) *Server {
	s := &Server{Token: token, pulls: map[string][]Pull{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// AddRepo adds a repository (an ID is given when it has none).
func (s *Server) AddRepo(r Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == 0 {
		r.ID = int64(1000 + len(s.repos))
	}
	s.repos = append(s.repos, r)
}

// AddPull opens a pull request on repository "owner/name".
func (s *Server) AddPull(repo string, p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls[repo] = append(s.pulls[repo], p)
}

// ClosePull closes pull request number of repository "owner/name".
func (s *Server) ClosePull(repo string, number int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pulls[repo] {
		if p.Number == number {
			s.pulls[repo][i].Closed = true
		}
	}
}

// PageSize makes every page hold at most n items (0: as asked), so that
// a test sees the clients follow the pages.
func (s *Server) PageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

// Fail makes every answer the status code (0: answer normally), with a
// provider's JSON error message.
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = status
}

// Garbage makes every answer a 200 whose body is not JSON (false: answer
// normally).
func (s *Server) Garbage(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.garbage = on
}

// Requests are the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), PrivateToken: r.Header.Get("PRIVATE-TOKEN")})
	segs := segments(r.URL.EscapedPath())
	if len(segs) < 2 || segs[0] != "api" {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	var p provider
	switch segs[1] {
	case "v3":
		p = gitHub{s}
	case "v4":
		p = gitLab{s}
	case "v1":
		p = gitea{s}
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	switch {
	case r.Method != http.MethodGet:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"message": "only GET is served"})
	case s.Token != "" && !p.authorized(r.Header, s.Token):
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": p.unauthorized()})
	case s.fail != 0:
		writeJSON(w, s.fail, map[string]any{"message": http.StatusText(s.fail)})
	case s.garbage:
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	default:
		p.serve(w, r, segs[2:])
	}
}

// provider answers one provider's endpoints.
type provider interface {
	authorized(h http.Header, token string) bool
	unauthorized() string
	serve(w http.ResponseWriter, r *http.Request, segs []string)
}

// reposOf are the repositories of owner; with sub, those of its subgroups too.
func (s *Server) reposOf(owner string, sub bool) []Repo {
	var out []Repo
	for _, r := range s.repos {
		if r.Owner == owner || sub && strings.HasPrefix(r.Owner, owner+"/") {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) repo(fullName string) (Repo, bool) {
	for _, r := range s.repos {
		if r.fullName() == fullName {
			return r, true
		}
	}
	return Repo{}, false
}

func (s *Server) repoByID(id string) (Repo, bool) {
	for _, r := range s.repos {
		if itoa(r.ID) == id || r.fullName() == id {
			return r, true
		}
	}
	return Repo{}, false
}

// hasPath: a file or a directory of the repository.
func (r Repo) hasPath(p string) bool {
	p = strings.Trim(p, "/")
	for _, x := range r.Paths {
		if x == p || strings.HasPrefix(x, p+"/") {
			return true
		}
	}
	return false
}

func (r Repo) isDir(p string) bool {
	p = strings.Trim(p, "/")
	for _, x := range r.Paths {
		if strings.HasPrefix(x, p+"/") {
			return true
		}
	}
	return false
}

// pullsIn are the pull requests of repo in state: open (opened), closed
// (merged too), or all ("" or "all").
func (s *Server) pullsIn(repo string, state string) []Pull {
	var out []Pull
	for _, p := range s.pulls[repo] {
		switch state {
		case "open", "opened":
			if p.Closed {
				continue
			}
		case "closed", "merged":
			if !p.Closed {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}
