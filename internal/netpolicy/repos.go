package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
)

// RepoCheck decides whether a render may fetch from a repository URL that
// the source's files name: nil when the app's project allows it, else a
// *RepoError.
type RepoCheck func(repoURL string) error

type repoCheckKey struct{}

// WithRepoCheck gives ctx the app's RepoCheck, for the fetches a render
// makes on its behalf.
func WithRepoCheck(ctx context.Context, check RepoCheck) context.Context {
	if check == nil {
		return ctx
	}
	return context.WithValue(ctx, repoCheckKey{}, check)
}

// CheckRepo runs ctx's RepoCheck on repoURL; nil when ctx has none.
func CheckRepo(ctx context.Context, repoURL string) error {
	check, _ := ctx.Value(repoCheckKey{}).(RepoCheck)
	if check == nil {
		return nil
	}
	return check(repoURL)
}

// RepoError says that the app's project does not allow a repository.
type RepoError struct {
	App, Project string
}

func (e *RepoError) Error() string {
	return fmt.Sprintf("app %q: project %q does not allow this repository (sourceRepos): vendor it into the app's repository, or have the project's owner add it to sourceRepos",
		e.App, e.Project)
}

// DeniedError is a fetch that a render would have made and did not: the
// URL, the file (and field) that asked for it, and the rule (a *RepoError
// or a *HostError).
type DeniedError struct {
	// URL is the URL asked for, without credentials.
	URL string
	// Asker is what named it, e.g. `Chart.yaml dependency "db" of chart
	// charts/app`.
	Asker string
	Err   error
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("%s names %s, which is not fetched: %v", e.Asker, e.URL, e.Err)
}

func (e *DeniedError) Unwrap() error { return e.Err }

// Check runs both rules on a URL that asker names: the host policy on its
// host, then ctx's RepoCheck. The error is a *DeniedError.
func Check(ctx context.Context, hosts *Hosts, asker, rawURL string) error {
	err := hosts.CheckURL(rawURL)
	if err == nil {
		err = CheckRepo(ctx, rawURL)
	}
	if err != nil {
		return &DeniedError{URL: redact(rawURL), Asker: asker, Err: err}
	}
	return nil
}

// IsDenied reports whether err is a fetch refused by either rule: an
// operator's or a project owner's decision, which retrying does not change.
func IsDenied(err error) bool {
	var d *DeniedError
	var r *RepoError
	return errors.As(err, &d) || errors.As(err, &r) || IsHostRefused(err)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
