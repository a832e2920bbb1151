package gitsource

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// maxMessageBytes bounds the commit message RevisionMetadata answers: it
// travels through a workflow's history, and no page shows more.
const maxMessageBytes = 16 << 10

// RevisionMetadata is what a commit says of itself, as Argo CD's
// RevisionMetadata shows it: never a file of the commit, nor a credential.
type RevisionMetadata struct {
	// SHA is the commit's full SHA, which the revision resolved to.
	SHA string
	// Author is "Name <email>".
	Author string
	// Date is when the author wrote the commit.
	Date time.Time
	// Tags are the repository's tags that point at the commit, sorted.
	Tags []string
	// Message is the commit's message, cut at 16 KiB.
	Message string
}

// RevisionMetadata reads the commit a revision names (a full or short SHA,
// a branch, a tag or a ref, as Resolve takes them) from the repository's
// clone, fetched only when the commit is not there yet, and the tags the
// shared listing of refs has at it. A revision that names nothing answers
// an error for which IsNotFound holds.
func (r *Repos) RevisionMetadata(ctx context.Context, repoURL, revision string) (RevisionMetadata, error) {
	sha, err := r.Resolve(ctx, repoURL, revision)
	if err != nil {
		return RevisionMetadata{}, err
	}
	out := RevisionMetadata{SHA: sha}
	hash := plumbing.NewHash(sha)
	err = r.withClone(ctx, repoURL, func(c *clone) error {
		if err := r.ensureCommit(ctx, c, repoURL, hash); err != nil {
			return err
		}
		commit, err := c.repo.CommitObject(hash)
		if err != nil {
			return err
		}
		out.Author = fmt.Sprintf("%s <%s>", commit.Author.Name, commit.Author.Email)
		out.Date = commit.Author.When
		out.Message = commit.Message
		return nil
	})
	refs, lerr := r.listRefs(ctx, repoURL, false, r.opts.RefsTTL)
	var missing *CommitNotFoundError
	switch {
	case errors.As(err, &missing) && lerr == nil:
		// Said as a revision, with what the repository has instead.
		return RevisionMetadata{}, &RevisionNotFoundError{RepoURL: RedactURL(repoURL), Revision: strings.TrimSpace(revision),
			Branches: refs.branches(), Tags: refs.tags()}
	case IsNotFound(err):
		return RevisionMetadata{}, err
	case err != nil:
		return RevisionMetadata{}, fmt.Errorf("read %s commit %s: %w", RedactURL(repoURL), sha, err)
	case lerr != nil:
		return RevisionMetadata{}, fmt.Errorf("list the tags of %s: %w", RedactURL(repoURL), lerr)
	}
	if len(out.Message) > maxMessageBytes {
		out.Message = strings.ToValidUTF8(out.Message[:maxMessageBytes], "") + "…"
	}
	out.Tags = refs.tagsAt(sha)
	return out, nil
}

// tagsAt are the names of the tags whose commit is sha (an annotated
// tag's peeled), sorted.
func (l refList) tagsAt(sha string) []string {
	var out []string
	for _, name := range l.tags() {
		full := "refs/tags/" + name
		got, ok := l.hash(full+"^{}", 0)
		if !ok {
			got, ok = l.hash(full, 0)
		}
		if ok && got == sha {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
