package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// A local sync (ferry app sync --local DIR, the sync request's local)
// deploys a tree of uncommitted manifests, as argocd app sync --local does:
// the control worker renders the tree the CLI put in the manifest cache
// with the app's source options, exactly as a checkout, and the regions
// apply that render. Only its digest enters the history. The operation and
// its history entry record no revision, as Argo CD's do, and name the tree
// (ferryLocal); the app is then compared with Git at once, and shows
// OutOfSync until a sync deploys Git again. A request without local takes
// none of this path, so the histories of other syncs replay as they ran.

// validateLocal refuses a local sync request that the app cannot take,
// every problem at once.
func (s *appState) validateLocal(req contract.SyncRequest) error {
	if req.Local == nil {
		return nil
	}
	name := s.app.Metadata.Name
	errs := append([]error{req.Local.Validate()}, app.LocalSyncProblems(&s.app, req.DryRun)...)
	if req.Revision != "" || req.RollbackID != nil {
		errs = append(errs, errors.New("give either local manifests or a revision (or a rollback ID), not both"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app %q: local sync: %w", name, err)
	}
	return nil
}

// localSync renders the request's local tree and syncs it.
func (s *appState) localSync(ctx workflow.Context, req contract.SyncRequest) *app.OperationState {
	target, err := s.localTarget(ctx, *req.Local)
	if err != nil {
		return s.operationFailedEarly(ctx, "", req, err)
	}
	op := s.runOperation(ctx, target, requestParams(ctx, req), opRequest{info: req.Info, initiatedBy: req.InitiatedBy})
	// The regions hold what Git does not: compare with Git now, so that
	// the app shows OutOfSync at once, not at its next poll.
	s.requestCachedRefresh()
	return op.state
}

// localTarget renders the local tree as spec.source with the tree's path,
// and makes it the render the operation syncs (its hooks are the
// operation's). Its spec digest is the tree's, so that the next reconcile
// renders Git again and never takes it for a commit's.
func (s *appState) localTarget(ctx workflow.Context, l contract.LocalSource) (contract.Target, error) {
	src := s.app.Spec.Source
	src.Path = l.Path
	in := contract.RenderInput{App: s.app.Metadata.Name, Source: src, Namespace: s.renderNamespace(), Project: s.app.ProjectOf(), Local: l.Digest}
	var out contract.RenderResult
	summary := fmt.Sprintf("Render local manifests %s %s", short(l.Digest[len("sha256:"):]), l.Path)
	if err := workflow.ExecuteActivity(renderCtx(ctx, summary), contract.ActivityRender, in).Get(ctx, &out); err != nil {
		return contract.Target{}, fmt.Errorf("render the local manifests %.19s: %w", l.Digest, err)
	}
	if len(out.Children) > 0 {
		return contract.Target{}, fmt.Errorf("the local manifests hold %d Applications (an app of apps): a local sync deploys no child apps; sync each child app with --local instead",
			len(out.Children))
	}
	s.Rendered = &rendered{SpecDigest: "local:" + l.Digest, Digest: out.Digest, Count: out.Count, Hooks: out.Hooks, Source: &src, Local: l.Digest}
	return s.targetOf(s.Rendered), nil
}

// operationFailedEarly records a sync update's operation that failed
// before it began (its source could not be resolved or rendered).
func (s *appState) operationFailedEarly(ctx workflow.Context, revision string, req contract.SyncRequest, err error) *app.OperationState {
	now := workflow.Now(ctx)
	s.OperationSeq++
	op := &app.OperationState{
		ID: s.operationID(), Revision: revision, Phase: app.OperationError,
		Message: userMessage(ctx, err), StartedAt: now, FinishedAt: &now, Operation: operationOf(req.Info, req.InitiatedBy),
	}
	if req.Local != nil {
		op.Local = req.Local.Digest
	}
	s.Status.OperationState = op
	s.publish(ctx)
	return op
}
