package gitsource

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// maxListedRefs bounds how many branches and tags an error lists.
const maxListedRefs = 10

// RevisionNotFoundError says that a targetRevision names nothing in the
// repository, and what the repository has instead. It is a user error:
// retrying does not help until someone pushes or fixes the Application.
type RevisionNotFoundError struct {
	RepoURL  string // credentials removed
	Revision string
	Branches []string
	Tags     []string
}

func (e *RevisionNotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "resolve %s revision %q: no such branch, tag or commit", e.RepoURL, e.Revision)
	if len(e.Branches) == 0 && len(e.Tags) == 0 {
		b.WriteString("; the repository has no branches or tags")
		return b.String()
	}
	b.WriteString("; the repository has ")
	var parts []string
	if len(e.Branches) > 0 {
		parts = append(parts, "branches "+listNames(e.Branches))
	}
	if len(e.Tags) > 0 {
		parts = append(parts, "tags "+listNames(e.Tags))
	}
	b.WriteString(strings.Join(parts, " and "))
	return b.String()
}

func listNames(names []string) string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	if len(sorted) > maxListedRefs {
		return strings.Join(sorted[:maxListedRefs], ", ") + fmt.Sprintf(" (and %d more)", len(sorted)-maxListedRefs)
	}
	return strings.Join(sorted, ", ")
}

// CommitNotFoundError says that a commit is not in the repository, even
// after a fetch: it was never pushed, or a force-push removed it.
type CommitNotFoundError struct {
	RepoURL string // credentials removed
	SHA     string
}

func (e *CommitNotFoundError) Error() string {
	return fmt.Sprintf("checkout %s commit %s: not found after fetching every branch and tag, nor the tip of any ref of the repository; "+
		"was it force-pushed away, or is it a commit of another repository?", e.RepoURL, e.SHA)
}

// IsNotFound reports whether err means that a revision or commit does not
// exist in the repository (as opposed to a failure to reach it), so callers
// can treat it as non-retryable.
func IsNotFound(err error) bool {
	var rev *RevisionNotFoundError
	var commit *CommitNotFoundError
	return errors.As(err, &rev) || errors.As(err, &commit)
}

// isTransportError reports whether err came from reaching the remote
// (network, authentication, missing repository) rather than from the local
// clone. Such errors never make Checkout wipe a clone.
func isTransportError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	for _, target := range []error{
		transport.ErrRepositoryNotFound,
		transport.ErrEmptyRemoteRepository,
		transport.ErrAuthenticationRequired,
		transport.ErrAuthorizationFailed,
		transport.ErrInvalidAuthMethod,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var netErr net.Error
	var httpErr *githttp.Err
	return errors.As(err, &netErr) || errors.As(err, &httpErr)
}

// withHint says what to do next about the remote errors a user can fix.
func withHint(err error) error {
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		return fmt.Errorf("%w; give the worker credentials for this repository (%s, or %s and %s; %s for SSH; with its host in %s)",
			err, EnvToken, EnvUsername, EnvPassword, EnvSSHKeyFile, EnvHosts)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w; check spec.source.repoURL", err)
	}
	return err
}
