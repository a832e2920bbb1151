package scm

import "context"

// PullRequest is an open pull (or merge) request, as the pull request
// generator gives it.
type PullRequest struct {
	Number       int64
	Title        string
	Branch       string // the head (source) branch
	TargetBranch string // the base branch
	HeadSHA      string
	Labels       []string
	Author       string
}

// Repository is one repository of an organization, at one branch, as the
// SCM provider generator gives it.
type Repository struct {
	Organization string
	Repository   string
	// URL is the clone URL of the generator's cloneProtocol.
	URL    string
	Branch string
	// SHA is the branch's head commit; empty until Branches fills it.
	SHA    string
	Labels []string
	ID     int64
}

// PullRequests lists a repository's open pull requests.
type PullRequests interface {
	PullRequests(ctx context.Context) ([]PullRequest, error)
}

// Repositories lists an organization's repositories and reads them.
type Repositories interface {
	// Repos are the repositories at their default branch (SHA empty),
	// with URL of the clone protocol ("", "ssh" or "https").
	Repos(ctx context.Context, cloneProtocol string) ([]Repository, error)
	// Branches are the repository at its default branch, or at each of
	// its branches when the provider was asked for all; SHA filled.
	Branches(ctx context.Context, r Repository) ([]Repository, error)
	// HasPath reports whether the file or directory exists at r.Branch.
	HasPath(ctx context.Context, r Repository, path string) (bool, error)
}
