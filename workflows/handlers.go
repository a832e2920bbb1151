package workflows

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func (s *appState) registerHandlers(ctx workflow.Context) error {
	if err := registerStatusAndRefresh(ctx, s.statusView, s.onRefresh); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, contract.QueryTarget, s.targetView); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateSync, s.handleSync,
		workflow.UpdateHandlerOptions{Validator: s.validateSync}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateSpec, s.handleSpec,
		workflow.UpdateHandlerOptions{Validator: s.validateSpec}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateConfirm, s.handleConfirm,
		workflow.UpdateHandlerOptions{Validator: s.validateConfirm}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateTerminateOp, s.handleTerminateOp,
		workflow.UpdateHandlerOptions{Validator: s.validateTerminateOp}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateDelete, s.handleDelete,
		workflow.UpdateHandlerOptions{Validator: s.validateDelete})
}

// targetView answers QueryTarget: the target of the last render.
func (s *appState) targetView() (contract.Target, error) {
	if s.Rendered == nil {
		return contract.Target{}, fmt.Errorf("app %q has rendered no manifests yet: see its conditions (ferry app get %s)", s.app.Metadata.Name, s.app.Metadata.Name)
	}
	return s.targetOf(s.Rendered), nil
}

// onRefresh handles the refresh signal. A push (from the webhook) that did
// not move a revision the app tracks is ignored; one that touched none of
// a single-source app's manifest-generate-paths refreshes without
// rendering again (a multi-source app renders its sources together).
func (s *appState) onRefresh(req contract.RefreshRequest) {
	if p := req.Push; p != nil {
		if !pushMovesApp(&s.app, p) {
			return
		}
		if !s.app.IsMultiSource() && p.Before != "" && p.After != "" && !pushTouchesManifests(&s.app, p) {
			s.untouched = &untouchedPush{Before: p.Before, After: p.After}
		}
	}
	if req.Drift != nil && req.Push == nil && !req.Hard {
		// Git did not move: compare again without asking it.
		s.requestCachedRefresh()
		return
	}
	s.requestRefresh(req.Hard)
}

// requestCachedRefresh asks for a reconcile that the shared listings (Git
// refs, chart indexes) may answer, unless a fresh one is asked already.
func (s *appState) requestCachedRefresh() {
	if s.Refresh == nil {
		s.Refresh = &refreshReq{DriftOnly: true}
	}
}

func (s *appState) requestRefresh(hard bool) {
	if s.Refresh == nil {
		s.Refresh = &refreshReq{}
	}
	s.Refresh.Hard = s.Refresh.Hard || hard
	s.Refresh.DriftOnly = false
}

func (s *appState) validateSync(ctx workflow.Context, req contract.SyncRequest) error {
	if s.deletion != nil {
		return contract.ErrDeleting
	}
	if s.app.InShadow() && !req.DryRun {
		return fmt.Errorf("app %q runs in shadow (annotation %s): Argo CD still manages it, so Ferry only compares; "+
			"sync it with --dry-run, or take it over first (ferry app takeover %s)", s.app.Metadata.Name, app.AnnotationShadow, s.app.Metadata.Name)
	}
	if err := s.validateSyncSource(req); err != nil {
		return err
	}
	if err := s.validateSyncOptions(req); err != nil {
		return err
	}
	if err := s.validateLocal(req); err != nil { // sync_local.go
		return err
	}
	if req.RollbackID == nil {
		return nil
	}
	if s.app.AutomatedSync() {
		return fmt.Errorf("app %q: rollback is not allowed while automated sync is on: remove spec.syncPolicy.automated (ferry app apply) first",
			s.app.Metadata.Name)
	}
	if req.Revision != "" {
		return fmt.Errorf("app %q: give either a revision or a rollback ID, not both", s.app.Metadata.Name)
	}
	if _, ok := s.Status.HistoryByID(*req.RollbackID); !ok {
		return fmt.Errorf("app %q: no history entry with ID %d: see ferry app history %s",
			s.app.Metadata.Name, *req.RollbackID, s.app.Metadata.Name)
	}
	return nil
}

func (s *appState) handleSync(ctx workflow.Context, req contract.SyncRequest) (*app.OperationState, error) {
	p := &pendingSync{req: req}
	s.syncs = append(s.syncs, p)
	if err := workflow.Await(ctx, func() bool { return p.done }); err != nil {
		return nil, err
	}
	return p.result, p.err
}

// validateSpec refuses a spec update before it is accepted: the Application
// is parsed as strictly as `ferry app apply` parses a file (every unknown or
// unsupported field named), then validated; one from another owner than
// the app's is refused (CheckOwner).
func (s *appState) validateSpec(ctx workflow.Context, raw json.RawMessage, by contract.SpecRequest) error {
	if s.deletion != nil {
		return contract.ErrDeleting
	}
	ownerErr := contract.CheckOwner(s.app.Metadata.Name, s.Owner, by)
	next, err := parseSpec(raw)
	if ownerErr != nil && (err != nil || !metadataEdit(s.Owner, by, &s.app, &next)) {
		return ownerErr
	}
	if err != nil {
		return err
	}
	if next.Metadata.Name != s.app.Metadata.Name {
		return fmt.Errorf("app %q: the spec update names app %q: an app cannot be renamed; apply it as a new app",
			s.app.Metadata.Name, next.Metadata.Name)
	}
	return app.Validate(&next, s.validateOptions())
}

func (s *appState) handleSpec(ctx workflow.Context, raw json.RawMessage, by contract.SpecRequest) (contract.View, error) {
	// The validator parsed it already; a replay runs no validator.
	next, err := parseSpec(raw)
	if err != nil {
		return contract.View{}, err
	}
	unchanged := next.SpecDigest() == s.app.SpecDigest()
	// The validator let it through: the sender owns the app now (the same
	// owner, an adopting user, or the first to claim an unrecorded app),
	// unless it is a user's edit of a set's app's metadata.
	if !metadataEdit(s.Owner, by, &s.app, &next) {
		owner := by.Owner()
		s.Owner = &owner
	}
	s.app = next
	if unchanged {
		// The same spec again, as the update that starts a new app carries
		// the spec it started with: the shared listing of the repository may
		// answer, as for a timer poll, so that many new apps on one
		// repository cost one listing per interval, not one each.
		s.requestCachedRefresh()
	} else {
		s.requestRefresh(false)
	}
	return s.view(), nil
}

func (s *appState) validateDelete(ctx workflow.Context, req contract.DeleteRequest) error {
	if s.deletion != nil {
		return contract.ErrDeleting
	}
	if err := req.Validate(s.app.Metadata.Name); err != nil {
		return err
	}
	return checkDeleteOwner(s.app.Metadata.Name, s.Owner, req)
}

// handleDelete answers once the app is deleted, the deletion failed, or it
// waits for its confirmation (Delete=confirm): it goes on once confirmed.
func (s *appState) handleDelete(ctx workflow.Context, req contract.DeleteRequest) (contract.DeleteOutcome, error) {
	p := &pendingDelete{req: req}
	s.deletion = p
	if err := workflow.Await(ctx, func() bool { return p.done || p.waiting != "" }); err != nil {
		return contract.DeleteOutcome{}, err
	}
	if !p.done {
		return contract.DeleteOutcome{Waiting: p.waiting}, nil
	}
	return contract.DeleteOutcome{}, p.err
}

// invalidInput fails the workflow for good: the app as given cannot run.
func invalidInput(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), "InvalidApplication", nil)
}
