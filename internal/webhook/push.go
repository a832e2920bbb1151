package webhook

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// Path is where the Receiver is served.
const Path = "/api/webhook"

// Provider names a Git hosting provider whose deliveries Ferry reads.
type Provider string

const (
	GitHub    Provider = "github"
	GitLab    Provider = "gitlab"
	Bitbucket Provider = "bitbucket"
	Gitea     Provider = "gitea"
)

// Providers lists every provider Ferry reads, in the order their headers
// are checked (Gitea also sends GitHub's headers, so it comes first).
var Providers = []Provider{Gitea, GitHub, GitLab, Bitbucket}

// maxPaths bounds the changed files a push carries to each app: the list
// lands in every matching app's workflow history. Beyond it the list is
// dropped, which means "unknown" and costs at most a re-render.
const maxPaths = 256

// Push is one ref update as a provider reports it.
type Push struct {
	Provider Provider
	// RepoURLs are the URLs the provider gives for the repository (clone,
	// SSH and web forms); any of them may be what an app's spec names.
	RepoURLs []string
	// Ref is the full ref that moved: refs/heads/main, refs/tags/v1.2.0.
	Ref string
	// Before and After are the ref's SHAs; empty when the ref was created
	// (Before) or deleted (After).
	Before, After string
	// DefaultBranch is true when Ref is the repository's default branch, or
	// may be (a branch push from a provider that does not say which is).
	DefaultBranch bool
	// Paths are the files the push touched, sorted; nil when unknown.
	Paths []string
}

// RepoKeys are the normalised forms of the push's repository URLs, the keys
// an Index matches apps by.
func (p Push) RepoKeys() []string {
	var keys []string
	for _, u := range p.RepoURLs {
		if k := repoKey(u); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// repoKey is gitsource.NormalizeURL, lower-cased: the four providers match
// owner and repository names case-insensitively, so "Org/Repo" and
// "org/repo" in two apps' specs are one repository to them.
func repoKey(raw string) string { return strings.ToLower(gitsource.NormalizeURL(raw)) }

// App is a running Application and one repoURL of its sources as written:
// an app of several repositories is listed once per repository.
type App struct {
	Name    string
	RepoURL string
}

// ErrAppGone is what a Refresher returns when the app no longer runs; the
// receiver then forgets its index instead of counting a failure.
var ErrAppGone = errors.New("app no longer runs")

// Refresher is what the receiver needs from the orchestrator.
type Refresher interface {
	// Apps lists every running app with its repo URLs, one App each.
	Apps(ctx context.Context) ([]App, error)
	// Refresh sends the push to the app, with the app's repo URLs it
	// matched; the app refreshes if the push moved a revision it tracks.
	Refresh(ctx context.Context, app Match, p Push) error
}

// noSHA maps the all-zero SHA providers send for a created or deleted ref
// to "".
func noSHA(sha string) string {
	if strings.Trim(sha, "0") == "" {
		return ""
	}
	return sha
}

// changedPaths collects the files of commits; complete is false when the
// provider left commits out, and then the paths are unknown.
func changedPaths(commits []commitFiles, complete bool) []string {
	if !complete || len(commits) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range commits {
		for _, list := range [][]string{c.Added, c.Modified, c.Removed} {
			for _, p := range list {
				if p != "" {
					seen[p] = true
				}
			}
		}
	}
	if len(seen) == 0 || len(seen) > maxPaths {
		return nil
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// commitFiles is the file list of a commit, as GitHub, GitLab and Gitea
// give it.
type commitFiles struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// nonEmpty returns the distinct non-empty strings of s, in order.
func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
