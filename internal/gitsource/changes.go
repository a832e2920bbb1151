package gitsource

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ChangedFiles lists the files (paths from the repository's root) that
// differ between two commits: added, removed or modified, a rename as both
// names. The commits are fetched into the repository's clone when they are
// not there yet. Subtrees with the same hash in both are not walked, so two
// commits of a large monorepo that differ in one directory cost little.
func (r *Repos) ChangedFiles(ctx context.Context, repoURL, from, to string) ([]string, error) {
	var out []string
	err := r.withClone(ctx, repoURL, func(c *clone) error {
		out = nil
		var trees [2]*object.Tree
		for i, sha := range []string{from, to} {
			hash := plumbing.NewHash(sha)
			if err := r.ensureCommit(ctx, c, repoURL, hash); err != nil {
				return err
			}
			commit, err := c.repo.CommitObject(hash)
			if err != nil {
				return err
			}
			if trees[i], err = commit.Tree(); err != nil {
				return err
			}
		}
		changes, err := object.DiffTreeWithOptions(ctx, trees[0], trees[1], &object.DiffTreeOptions{})
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if ch.From.Name != "" {
				out = append(out, ch.From.Name)
			}
			if ch.To.Name != "" && ch.To.Name != ch.From.Name {
				out = append(out, ch.To.Name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("compare %s commits %s and %s: %w", RedactURL(repoURL), from, to, err)
	}
	return out, nil
}
