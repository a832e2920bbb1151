package gitsource

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// scpLike matches Git's scp-like syntax, [user@]host:path, which has no
// scheme and a colon before the first slash.
var scpLike = regexp.MustCompile(`^(?:([^@/]+)@)?([^:/]+):(.*)$`)

// defaultPorts are dropped from normalised URLs so that an explicit default
// port and an implicit one give the same key.
var defaultPorts = map[string]string{
	"http":  "80",
	"https": "443",
	"ssh":   "22",
	"git":   "9418",
}

// NormalizeURL maps the ways one repository is written to a single key:
// the scheme, user info, query, fragment, a trailing slash and a trailing
// ".git" are dropped, the host is lower-cased, a default port is dropped, and
// scp-like "git@host:org/repo" is read as "ssh://git@host/org/repo". So
//
//	git@github.com:org/repo.git
//	ssh://git@GitHub.com/org/repo
//	https://github.com/org/repo/
//
// all give "github.com/org/repo". The path keeps its case, because Git
// servers in general are case-sensitive; compare keys with strings.EqualFold
// where a host is known to be case-insensitive. Local paths and file URLs
// keep a "file://" prefix so that they never collide with a host.
//
// The key is used for cache directories (hashed, never as a path) and for
// matching webhook payloads to Applications.
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	var host, p string
	switch {
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return trimRepoSuffix(strings.ToLower(s))
		}
		if u.Scheme == "file" {
			return "file://" + trimRepoSuffix(path.Clean("/"+u.Path))
		}
		host = strings.ToLower(u.Hostname())
		if port := u.Port(); port != "" && port != defaultPorts[strings.ToLower(u.Scheme)] {
			host += ":" + port
		}
		p = u.Path
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "."):
		return "file://" + trimRepoSuffix(path.Clean(s))
	default:
		m := scpLike.FindStringSubmatch(s)
		if m == nil {
			return trimRepoSuffix(s)
		}
		host = strings.ToLower(m[2])
		p = m[3]
	}
	p = strings.Trim(path.Clean("/"+p), "/")
	return trimRepoSuffix(host + "/" + p)
}

func trimRepoSuffix(s string) string {
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, ".git")
	return strings.TrimRight(s, "/")
}

// RedactURL removes credentials from a repository URL so that it can appear
// in errors and logs: "https://user:token@host/r.git" becomes
// "https://host/r.git". scp-like URLs keep their user name ("git@host:r"),
// which is never a secret. A string that is not a URL is returned unchanged.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, hasPassword := u.User.Password(); !hasPassword && u.Scheme == "ssh" {
		return raw // ssh://git@host/...: the user name alone is no secret
	}
	u.User = nil
	return u.String()
}

// secrets returns the strings of raw that must never be printed: the whole
// user info and the password alone, in raw and escaped form.
func secrets(raw string) []string {
	if !strings.Contains(raw, "://") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	var out []string
	if pw, ok := u.User.Password(); ok && pw != "" {
		out = append(out, u.User.String(), pw, url.QueryEscape(pw), url.PathEscape(pw))
	} else if u.Scheme != "ssh" && u.User.Username() != "" {
		// A lone user name on https is usually a token.
		out = append(out, u.User.String(), u.User.Username())
	}
	return out
}

// redactedError hides a URL's credentials in the text of an error that
// go-git or the transport produced, and puts a server's multi-line reason on
// one line, keeping the chain for errors.Is/As.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}

func (e *redactedError) Unwrap() error { return e.err }

// redactErr wraps err so that no credential of rawURL appears in its text.
func redactErr(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	s := secrets(rawURL)
	if len(s) == 0 && !strings.ContainsAny(err.Error(), "\n\r") {
		return err
	}
	var already *redactedError
	if errors.As(err, &already) && len(s) > 0 && len(already.secrets) > 0 && already.secrets[0] == s[0] {
		return err
	}
	return &redactedError{err: err, secrets: s}
}

// UnsupportedSchemeError says that a repository URL has a scheme Ferry
// does not fetch over: a placeholder that a tool was meant to rewrite
// (cnoe://name), or git:// and ftp://. Argo CD keeps such an Application
// and shows why it cannot fetch it; so does Ferry. No retry helps until
// the Application changes.
type UnsupportedSchemeError struct {
	RepoURL string // credentials removed
	Scheme  string
}

func (e *UnsupportedSchemeError) Error() string {
	return fmt.Sprintf("repository %s: scheme %q is not one Ferry fetches over: write repoURL as https://host/org/repo.git, ssh://git@host/org/repo.git, git@host:org/repo.git or file:///path/to/repo.git",
		e.RepoURL, e.Scheme)
}

// IsUnsupportedScheme reports whether err is an *UnsupportedSchemeError.
func IsUnsupportedScheme(err error) bool {
	var e *UnsupportedSchemeError
	return errors.As(err, &e)
}

// checkScheme refuses, before any network call, a URL whose scheme is not
// https, http, ssh or file; a URL without one (scp-like, a local path) is
// go-git's to read.
func checkScheme(repoURL string) error {
	scheme, _, ok := strings.Cut(repoURL, "://")
	if !ok {
		return nil
	}
	switch strings.ToLower(scheme) {
	case "https", "http", "ssh", "file":
		return nil
	}
	return &UnsupportedSchemeError{RepoURL: RedactURL(repoURL), Scheme: strings.ToLower(scheme)}
}
