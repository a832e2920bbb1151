package workflows

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// sourceFields are the fields of Argo CD's sync operation that would name
// another source: a sync of a Ferry app takes its own repository's revisions.
var sourceFields = map[string]bool{"repoURL": true, "source": true, "sources": true}

// validateSyncSource refuses a sync of anything but a revision of the app's
// own repository (spec.source.repoURL): a request naming a source or
// repository, a revision that cannot be a branch, tag or SHA (a URL, say),
// and a rollback to a deployment of another repository. Every problem is
// named at once.
func (s *appState) validateSyncSource(req contract.SyncRequest) error {
	name, repo := s.app.Metadata.Name, s.app.PrimaryRepoURL()
	var errs []error
	for _, f := range req.UnknownFields() {
		if sourceFields[f] {
			errs = append(errs, fmt.Errorf("app %q: sync request field %q: a sync takes only a revision of the app's repository %s; "+
				"to deploy another repository, change spec.source with ferry app apply", name, f, repo))
			continue
		}
		known := make([]string, 0, 4)
		for k := range contract.SyncRequestFields() {
			known = append(known, k)
		}
		sort.Strings(known)
		errs = append(errs, fmt.Errorf("app %q: sync request field %q is unknown: the fields are %s", name, f, strings.Join(known, ", ")))
	}
	if rev := req.Revision; rev != "" && !isRevisionName(rev) {
		errs = append(errs, fmt.Errorf("app %q: revision %q is not a branch, tag or commit SHA: a sync takes only a revision of the app's repository %s; "+
			"to deploy another repository, change spec.source with ferry app apply", name, rev, repo))
	}
	if req.RollbackID != nil {
		if e, ok := s.Status.HistoryByID(*req.RollbackID); ok {
			errs = append(errs, s.validateRollbackEntry(*req.RollbackID, e)...)
		}
	}
	return errors.Join(errs...)
}

// validateRollbackEntry refuses a rollback to a deployment of another
// repository than the app's, and one across a change between one source
// and several (spec.source and spec.sources), which the app cannot take
// without a spec update.
func (s *appState) validateRollbackEntry(id int64, e app.HistoryEntry) []error {
	name, repo := s.app.Metadata.Name, s.app.PrimaryRepoURL()
	multi := s.app.IsMultiSource()
	switch {
	case e.Local != "":
		return []error{fmt.Errorf("app %q: history entry %d was synced from local manifests (ferry app sync --local), which no revision of Git holds: "+
			"roll back to another entry, or sync the directory again with --local", name, id)}
	case multi && len(e.Sources) == 0 && e.Source.RepoURL != "":
		return []error{fmt.Errorf("app %q: history entry %d was deployed from one source (spec.source), and the app has spec.sources now: "+
			"a rollback restores an entry of the same kind; roll back to a later entry, or apply the entry's spec.source with ferry app apply", name, id)}
	case !multi && len(e.Sources) > 0:
		return []error{fmt.Errorf("app %q: history entry %d was deployed from %d sources (spec.sources), and the app has one source now: "+
			"a rollback restores an entry of the same kind; roll back to a later entry, or apply the entry's spec.sources with ferry app apply", name, id, len(e.Sources))}
	case multi:
		var repos []string
		for _, src := range s.app.Spec.Sources {
			if !slices.Contains(repos, src.RepoURL) {
				repos = append(repos, src.RepoURL)
			}
		}
		var errs []error
		for i, src := range e.Sources {
			if !slices.Contains(repos, src.RepoURL) {
				errs = append(errs, fmt.Errorf("app %q: source %d of history entry %d was deployed from %s, not from a repository of the app's spec.sources (%s): "+
					"a rollback takes only revisions of the app's repositories", name, i, id, src.RepoURL, strings.Join(repos, ", ")))
			}
		}
		return errs
	case e.Source.RepoURL != "" && e.Source.RepoURL != repo:
		return []error{fmt.Errorf("app %q: history entry %d was deployed from %s, not from the app's repository %s: "+
			"a rollback takes only a revision of the app's repository", name, id, e.Source.RepoURL, repo)}
	}
	return nil
}

// isRevisionName reports whether rev can name a branch, a tag, a full ref
// or a commit SHA, by git check-ref-format's rules: no URL, no scp-like
// address, no path that climbs out, no revision expression.
func isRevisionName(rev string) bool {
	if rev != strings.TrimSpace(rev) || strings.HasPrefix(rev, "-") || strings.HasPrefix(rev, "/") ||
		strings.HasSuffix(rev, "/") || strings.HasSuffix(rev, ".") || strings.HasSuffix(rev, ".lock") ||
		strings.Contains(rev, "..") || strings.Contains(rev, "//") || strings.Contains(rev, "@{") || rev == "@" {
		return false
	}
	for _, r := range rev {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(`:?*[\^~`, r) {
			return false
		}
	}
	return true
}

// requestedRevision marks the resolve of rev for src as a sync request's
// (ferry app sync --revision), which the resolving activity checks against
// the rule on requested revisions; nil for the revision the spec names
// (which its author chose), a chart's version, and anything not requested.
// Only the resolve's input changes, which a replay does not compare.
func (s *appState) requestedRevision(requested bool, src app.Source, rev string) *contract.RequestedRevision {
	if !requested || src.IsChartSource() || rev == src.Revision() {
		return nil
	}
	return &contract.RequestedRevision{App: s.app.Metadata.Name, Project: s.app.ProjectOf()}
}
