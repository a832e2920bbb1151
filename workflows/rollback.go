package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// rollbackSourceVersion marks the runs whose rollback restores the history
// entry's whole source (path, chart, every option), as Argo CD's rollback
// does; before it, a rollback synced the entry's revision with the
// current spec.source.
const rollbackSourceVersion = "rollback-entry-source"

// rollbackSourcesVersion marks the runs whose rollback of a multi-source
// app restores the history entry's sources (each with its revision, as
// Argo CD's RevisionHistory holds them); before it, the entry's revisions
// were synced with the current spec.sources.
const rollbackSourcesVersion = "rollback-entry-sources"

// syncSource is the revision and source a sync update deploys: the
// request's revision of spec.source, or a rollback's history entry with
// the source it was deployed from (a multi-source app's: the entry's
// sources, returned as srcs; nil: spec.sources). The app's spec is left as
// it is: after a rollback the app is OutOfSync with its spec, as in Argo CD.
func (s *appState) syncSource(ctx workflow.Context, req contract.SyncRequest) (rev string, src app.Source, srcs []app.Source, err error) {
	if req.RollbackID == nil {
		return req.Revision, s.app.Spec.Source, nil, nil
	}
	entry, ok := s.Status.HistoryByID(*req.RollbackID)
	if !ok {
		return "", app.Source{}, nil, fmt.Errorf("app %q: no history entry with ID %d", s.app.Metadata.Name, *req.RollbackID)
	}
	v := changeVersion(ctx, rollbackSourceVersion)
	if s.app.IsMultiSource() && len(entry.Sources) > 0 &&
		changeVersion(ctx, rollbackSourcesVersion) == 1 {
		return entry.Revision, s.app.Spec.Source, entry.Sources, nil
	}
	// An entry recorded without its source (none are, since Ferry records
	// them) falls back to spec.source; the validator refused one of
	// another repository.
	if v == workflow.DefaultVersion || entry.Source.RepoURL == "" {
		return entry.Revision, s.app.Spec.Source, nil, nil
	}
	return entry.Revision, entry.Source, nil, nil
}

// specDigestWithSources is the digest of the app's spec with srcs as its
// spec.sources: the key of a render of a rollback's sources.
func (s *appState) specDigestWithSources(srcs []app.Source) string {
	a := s.app
	a.Spec.Sources = srcs
	return a.SpecDigest()
}

// specDigestWith is the digest of the app's spec with src as its source:
// the key of a render of src.
func (s *appState) specDigestWith(src app.Source) string {
	a := s.app
	a.Spec.Source = src
	return a.SpecDigest()
}
