package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/app"
)

// rollbackSourceVersion marks the runs whose rollback restores the history
// entry's whole source (path, chart, every option), as Argo CD's rollback
// does; before it, a rollback synced the entry's revision with the
// current spec.source.
const rollbackSourceVersion = "rollback-entry-source"

// syncSource is the revision and source a sync update deploys: the
// request's revision of spec.source, or a rollback's history entry with
// the source it was deployed from. The app's spec is left as it is: after
// a rollback the app is OutOfSync with spec.source, as in Argo CD.
func (s *appState) syncSource(ctx workflow.Context, req SyncRequest) (string, app.Source, error) {
	if req.RollbackID == nil {
		return req.Revision, s.app.Spec.Source, nil
	}
	entry, ok := s.status.HistoryByID(*req.RollbackID)
	if !ok {
		return "", app.Source{}, fmt.Errorf("app %q: no history entry with ID %d", s.app.Metadata.Name, *req.RollbackID)
	}
	v := workflow.GetVersion(ctx, rollbackSourceVersion, workflow.DefaultVersion, 1)
	// An entry recorded without its source (none are, since Ferry records
	// them) falls back to spec.source; the validator refused one of
	// another repository.
	if v == workflow.DefaultVersion || entry.Source.RepoURL == "" {
		return entry.Revision, s.app.Spec.Source, nil
	}
	return entry.Revision, entry.Source, nil
}

// specDigestWith is the digest of the app's spec with src as its source:
// the key of a render of src.
func (s *appState) specDigestWith(src app.Source) string {
	a := s.app
	a.Spec.Source = src
	return a.SpecDigest()
}
