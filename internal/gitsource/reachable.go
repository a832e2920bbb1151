package gitsource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// RevisionRefusedError says that a revision a sync asked for is not one
// the rule admits: a branch, a tag, or a commit that one of them reaches.
// It is a user error: retrying does not help.
type RevisionRefusedError struct {
	RepoURL  string // credentials removed
	Revision string
	Reason   string
}

func (e *RevisionRefusedError) Error() string {
	return fmt.Sprintf("revision %q of %s: %s", e.Revision, e.RepoURL, e.Reason)
}

// IsRevisionRefused reports whether err is a *RevisionRefusedError.
func IsRevisionRefused(err error) bool {
	var r *RevisionRefusedError
	return errors.As(err, &r)
}

// CheckBranchOrTag checks that rev, which Resolve turned into sha, is
// "" or HEAD, a branch or tag (by name or as refs/heads/…, refs/tags/…),
// or a commit that a branch or tag of the repository reaches: not a ref
// outside them (refs/pull/1/head), nor a commit only such a ref holds.
//
// A commit at the tip of a branch or tag costs nothing beyond the shared
// listing of refs; any other is looked for in the history of every branch
// and tag, after a fetch of them into the repository's clone: one walk of
// the history at most, which a big repository makes slow.
func (r *Repos) CheckBranchOrTag(ctx context.Context, repoURL, rev, sha string) error {
	rev = strings.TrimSpace(rev)
	refused := func(reason string) error {
		return &RevisionRefusedError{RepoURL: RedactURL(repoURL), Revision: rev, Reason: reason}
	}
	switch {
	case rev == "" || rev == "HEAD":
		return nil
	case strings.HasPrefix(rev, "refs/"):
		if strings.HasPrefix(rev, "refs/heads/") || strings.HasPrefix(rev, "refs/tags/") {
			return nil
		}
		return refused("the ref is outside refs/heads and refs/tags")
	}
	// The shared listing may predate a push of the commit asked for: a
	// commit it does not reach is looked for again in a fresh one, from
	// the tips that listing adds.
	walked := map[plumbing.Hash]bool{}
	for _, fresh := range []bool{false, true} {
		refs, err := r.listRefs(ctx, repoURL, fresh, r.opts.RefsTTL)
		if err != nil {
			return fmt.Errorf("list the refs of %s: %w", RedactURL(repoURL), err)
		}
		if _, ok := refs.match(rev); ok {
			return nil // a tag or branch of that name
		}
		if !isFullSHA(rev) && !isShortSHA(rev) {
			continue // a branch or tag pushed since, maybe
		}
		var tips []plumbing.Hash
		for _, tip := range refs.branchAndTagCommits() {
			if !walked[tip] {
				walked[tip] = true
				tips = append(tips, tip)
			}
		}
		if len(tips) == 0 {
			continue // nothing moved since the walk
		}
		if slices.Contains(tips, plumbing.NewHash(sha)) {
			return nil
		}
		found, err := r.reaches(ctx, repoURL, tips, plumbing.NewHash(sha))
		if err != nil {
			return fmt.Errorf("look for commit %s in the branches and tags of %s: %w", sha, RedactURL(repoURL), err)
		}
		if found {
			return nil
		}
	}
	if !isFullSHA(rev) && !isShortSHA(rev) {
		return refused("no branch or tag has that name")
	}
	return refused(fmt.Sprintf("commit %s is not in the history of any branch or tag", sha))
}

// branchAndTagCommits are the commits of the branches and tags (an
// annotated tag's peeled, the tag object itself too: the walk skips what
// is not a commit).
func (l refList) branchAndTagCommits() []plumbing.Hash {
	var out []plumbing.Hash
	for name, ref := range l {
		if (strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/")) && ref.Type() == plumbing.HashReference {
			out = append(out, ref.Hash())
		}
	}
	return out
}

// reaches fetches the branches and tags into the clone and walks the
// history from tips, each commit once, until it meets want.
func (r *Repos) reaches(ctx context.Context, repoURL string, tips []plumbing.Hash, want plumbing.Hash) (bool, error) {
	c := r.acquireClone(repoURL)
	defer r.releaseClone(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.open(RedactURL(repoURL), &r.opts); err != nil {
		return false, fmt.Errorf("open clone: %w", err)
	}
	if err := r.fetch(ctx, c, repoURL, fetchRefSpecs); err != nil {
		return false, err
	}
	seen := make(map[plumbing.Hash]bool, 1024)
	queue := append([]plumbing.Hash(nil), tips...)
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		if h == want {
			return true, nil
		}
		if len(seen)%4096 == 0 && ctx.Err() != nil {
			return false, ctx.Err()
		}
		commit, err := c.repo.CommitObject(h)
		if err != nil {
			continue // a tag object, or a tip moved since the listing
		}
		queue = append(queue, commit.ParentHashes...)
	}
	return false, nil
}
