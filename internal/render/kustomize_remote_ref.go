package render

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// RemoteRef is a Git repository that a kustomization names as a base,
// parsed as Kustomize parses it (its RepoSpec, which it keeps internal):
//
//	https://github.com/owner/repo//path?ref=v1   "//" ends the repository
//	https://host/owner/repo.git/path?ref=v1      so does ".git"
//	https://dev.azure.com/org/project/_git/repo/path
//	github.com/owner/repo/path?ref=v1            https:// implied
//	git@github.com:owner/repo/path?ref=v1        scp-like, ssh
//	ssh://git@host/owner/repo.git//path
//	git::https://…                               the prefix is dropped
//
// Without a marker the first two segments are the repository (owner/repo),
// as Kustomize assumes. ?ref= (or ?version=) names a branch, tag or commit;
// none is the remote's default branch. ?timeout= bounds the fetch (a number
// of seconds or a duration); ?submodules= is Kustomize's switch for
// submodules, which Ferry does not fetch.
type RemoteRef struct {
	// Repo is the repository's URL, as Ferry fetches it.
	Repo string `json:"repo"`
	// Ref is ?ref= (or ?version=); "" is the default branch.
	Ref string `json:"ref,omitempty"`
	// Path is the kustomization's directory in the repository, "" for its
	// root.
	Path string `json:"path,omitempty"`
	// Timeout is ?timeout=; zero when not given.
	Timeout time.Duration `json:"-"`
}

// String is the reference as Ferry reads it, for errors.
func (r RemoteRef) String() string {
	s := r.Repo
	if r.Path != "" {
		s += "//" + r.Path
	}
	if r.Ref != "" {
		s += "?ref=" + r.Ref
	}
	return s
}

var kustUser = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9-]*)@`)

// ParseRemoteRef parses a kustomization entry as a remote Git base. It
// fails for what Kustomize would not clone, for file:// URLs (a repository
// on the worker's own disk), for credentials written in the URL, for
// ?submodules=true, and for a path that climbs out of the repository.
func ParseRemoteRef(entry string) (RemoteRef, error) {
	n := strings.TrimSpace(entry)
	n, query, _ := strings.Cut(n, "?")
	var ref RemoteRef
	if err := ref.setQuery(query); err != nil {
		return RemoteRef{}, err
	}
	if rest, ok := cutPrefixFold(n, "git::"); ok {
		n = rest
	}
	if _, ok := cutPrefixFold(n, "file://"); ok {
		return RemoteRef{}, fmt.Errorf("a file:// repository is on the worker's own disk: name a repository the worker fetches over https or ssh")
	}
	scheme := ""
	for _, s := range []string{"ssh://", "https://", "http://"} {
		if rest, ok := cutPrefixFold(n, s); ok {
			scheme, n = s, rest
			break
		}
	}
	user := ""
	if m := kustUser.FindStringSubmatch(n); m != nil {
		user, n = m[1]+"@", n[len(m[0]):]
	}
	github := strings.HasPrefix(strings.ToLower(n), "github.com/") || strings.HasPrefix(strings.ToLower(n), "github.com:")
	scp := scheme == "" && (user != "" || github)
	if scheme == "" && !scp {
		return RemoteRef{}, fmt.Errorf("not a Git URL: write https://host/owner/repo//path?ref=v1 or git@host:owner/repo//path?ref=v1")
	}
	sep := strings.Index(n, "/")
	if scp {
		if c := strings.Index(n, ":"); c > 0 && (sep < 0 || c < sep) {
			sep = c
		}
	}
	if sep <= 0 {
		return RemoteRef{}, fmt.Errorf("no host in the URL")
	}
	host, rest := n[:sep+1], n[sep+1:]
	if strings.Contains(host[:len(host)-1], "@") || strings.Contains(user, ":") {
		return RemoteRef{}, fmt.Errorf("credentials written in a remote base URL are not used: give the worker credentials for the repository instead")
	}
	if github {
		if strings.HasPrefix(scheme, "ssh://") || user != "" {
			scheme, host = "", "github.com:"
		} else {
			scheme, user, host = "https://", "", "github.com/"
		}
	}
	repoPath, kustPath, err := splitRepoPath(rest)
	if err != nil {
		return RemoteRef{}, err
	}
	ref.Repo = scheme + user + host + repoPath
	if scheme != "" {
		if _, err := url.Parse(ref.Repo); err != nil {
			return RemoteRef{}, fmt.Errorf("not a URL: %w", err)
		}
	}
	ref.Path = kustPath
	return ref, nil
}

// splitRepoPath splits what follows the host into the repository and the
// path in it, as Kustomize does: at "_git/<repo>", "//" or ".git", else
// after owner/repo.
func splitRepoPath(n string) (repo, dir string, err error) {
	switch {
	case strings.Contains(n, "_git/"):
		i := strings.Index(n, "_git/") + len("_git/")
		name, sub, _ := strings.Cut(n[i:], "/")
		repo, dir = n[:i]+name, sub
	case strings.Contains(n, "//"):
		repo, dir, _ = strings.Cut(n, "//")
	case strings.Contains(n, ".git"):
		i := strings.Index(n, ".git") + len(".git")
		repo, dir = n[:i], n[i:]
	default:
		segs := strings.Split(n, "/")
		if len(segs) < 2 {
			return "", "", fmt.Errorf("no repository in the URL: write host/owner/repo, or end the repository with .git or //")
		}
		repo, dir = strings.Join(segs[:2], "/"), strings.Join(segs[2:], "/")
	}
	if repo == "" {
		return "", "", fmt.Errorf("no repository in the URL")
	}
	dir = strings.Trim(dir, "/")
	if dir != "" {
		clean := path.Clean(dir)
		if clean == ".." || strings.HasPrefix(clean, "../") {
			return "", "", fmt.Errorf("the path %q climbs out of the repository", dir)
		}
		if dir = clean; dir == "." {
			dir = ""
		}
	}
	return repo, dir, nil
}

// setQuery reads ?ref=, ?version=, ?timeout= and ?submodules= as
// Kustomize does (ref wins over version; a timeout is whole seconds or a
// duration).
func (r *RemoteRef) setQuery(query string) error {
	values, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("the query %q does not parse: %w", query, err)
	}
	r.Ref = values.Get("version")
	if v := values.Get("ref"); v != "" {
		r.Ref = v
	}
	if v := values.Get("timeout"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
			r.Timeout = time.Duration(secs) * time.Second
		} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
			r.Timeout = d
		}
	}
	if v := values.Get("submodules"); v != "" {
		if on, err := strconv.ParseBool(v); err == nil && on {
			return fmt.Errorf("?submodules=true: Ferry does not fetch the submodules of remote bases; vendor them, or drop the parameter")
		}
	}
	return nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
