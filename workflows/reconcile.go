package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// reconcile resolves the revision, renders when needed, compares every
// region and, for an automated app that is OutOfSync, syncs.
func (s *appState) reconcile(ctx workflow.Context) {
	started := workflow.Now(ctx)
	poll := s.Refresh == nil // the timer's: it may skip the compare (idle.go)
	fresh := s.Refresh != nil && !s.Refresh.DriftOnly
	hard := fresh && s.Refresh.Hard
	s.Refresh = nil
	ctx = withPriority(ctx, s.reconcilePriority(poll))
	defer func() {
		now := workflow.Now(ctx)
		s.Status.ReconciledAt = &now
		s.appMetrics(ctx).Counter("ferry_app_reconcile_total").Inc(1)
		s.appMetrics(ctx).Timer("ferry_app_reconcile_duration_seconds").Record(now.Sub(started))
		s.publish(ctx)
	}()

	s.idleBegin(ctx)
	if s.projectRefuses(ctx) { // project_permits.go
		s.idleForget()
		return
	}
	target, err := s.target(ctx, s.app.Spec.Source.TargetRevision, fresh, hard)
	s.polls.ask = nil
	if err != nil {
		s.idleForget()
		s.setComparisonError(ctx, err)
		return
	}
	if poll && s.skipCompare(ctx, target) {
		return
	}
	// A new app's first sync may stand for its first compare (onboard.go).
	folded := s.foldsFirstCompare(ctx) && !s.windowsHoldAutoSync(ctx, target)
	if !folded {
		s.idleCompareBegins()
		s.compare(ctx, target)
		s.idleCompared(ctx, target)
		s.postSyncWhenSettled(ctx, target)
	}
	switch {
	case folded:
		s.autoSyncTo(ctx, target)
	case !s.shouldAutoSync(target):
		s.Status.SyncWindow = nil
	case !s.windowsHoldAutoSync(ctx, target):
		s.autoSyncTo(ctx, target)
	}
}

// autoSyncTo runs the automated sync of target.
func (s *appState) autoSyncTo(ctx workflow.Context, target contract.Target) {
	s.AutoSync = &autoSync{Key: s.autoSyncKey(target)}
	run := s.runOperation(ctx, target, syncParams{prune: s.app.AutoPrune()}, opRequest{auto: true,
		// As Argo CD's controller records an automated sync: no user.
		initiatedBy: &app.InitiatedBy{Automated: true}})
	s.idleForget()
	if !run.continued {
		s.endAutoSync(run)
	}
}

// endAutoSync records how the automated sync ended.
func (s *appState) endAutoSync(run *operation) {
	op := run.state
	if s.AutoSync == nil {
		s.AutoSync = &autoSync{Key: s.autoSyncKey(run.target)}
	}
	s.AutoSync.Phase, s.AutoSync.Unreachable = op.Phase, run.unreachable
	if op.Phase == app.OperationFailed || op.Phase == app.OperationError {
		// As Argo CD: the automated sync is not tried again for this
		// revision, and the condition says why until a sync succeeds.
		msg := fmt.Sprintf("Failed last sync attempt to [%s]: %s", op.Revision, op.Message)
		if op.RetryCount > 0 && !strings.HasSuffix(op.Message, retriedSuffix(op.RetryCount)) {
			msg += retriedSuffix(op.RetryCount) // an operation of a run before argoRetryMessages
		}
		s.setCondition(conditionSyncError, msg)
	}
}

// target resolves a revision (fresh: without the shared refs cache) and
// renders it, reusing the last render when neither the SHA nor the spec
// changed, unless hard or the last render had remote bases (which move
// without a commit; the render activity then answers from the manifest
// cache while their refs stay).
func (s *appState) target(ctx workflow.Context, revision string, fresh, hard bool) (contract.Target, error) {
	return s.targetFrom(ctx, s.app.Spec.Source, nil, revision, fresh, hard, false)
}

// targetFrom is target for a source other than spec.source: a rollback's,
// from its history entry. Its render is remembered as any other, under the
// digest of the spec with that source, so that the next reconcile renders
// spec.source again. A multi-source app takes srcs (a rollback's: the
// entry's sources with its revisions, one per source), or its spec.sources
// when srcs is nil.
func (s *appState) targetFrom(ctx workflow.Context, src app.Source, srcs []app.Source, revision string, fresh, hard, requested bool) (contract.Target, error) {
	if s.app.IsMultiSource() {
		return s.targetSources(ctx, srcs, revision, fresh, hard, requested) // multisource.go
	}
	if revision == "" {
		revision = app.DefaultTargetRevision
	}
	var resolved contract.ResolveResult
	err := workflow.ExecuteLocalActivity(resolveCtx(ctx, resolveSummary(src.RepoURL, revision)), contract.ActivityResolveRevision,
		contract.ResolveInput{RepoURL: src.RepoURL, TargetRevision: revision, Chart: src.Chart, Fresh: fresh, MaxAge: s.app.PollInterval(),
			Regions: s.polls.ask, Requested: s.requestedRevision(requested, src, revision)}).Get(ctx, &resolved)
	if err != nil {
		return contract.Target{}, fmt.Errorf("resolve revision %q of %s: %w", revision, src.RepoURL, err)
	}
	s.idleResolved(resolved.Workers)
	specDigest := s.specDigestWith(src)
	if r, u := s.Rendered, s.untouched; r != nil && !hard && u != nil && u.After == resolved.SHA &&
		u.Before == r.commit() && r.SpecDigest == specDigest {
		r.Revision = resolved.SHA
	}
	if r := s.Rendered; r != nil && !hard && r.commit() == resolved.SHA && r.SpecDigest == specDigest && r.RemoteBases == 0 {
		return s.targetOf(r), nil
	}
	var out contract.RenderResult
	renderIn := contract.RenderInput{App: s.app.Metadata.Name, Source: src, SHA: resolved.SHA, Namespace: s.renderNamespace(), Hard: hard, Fresh: fresh,
		Project: s.app.ProjectOf(), Unless: s.pathsCheck([]app.Source{src}, hard, specDigest)}
	if s.renderLocally(ctx) {
		err = workflow.ExecuteLocalActivity(renderLocalCtx(ctx, renderSummary(src, resolved.SHA)), contract.ActivityRender, renderIn).Get(ctx, &out)
	} else {
		err = workflow.ExecuteActivity(renderCtx(ctx, renderSummary(src, resolved.SHA)), contract.ActivityRender, renderIn).Get(ctx, &out)
	}
	if err != nil {
		return contract.Target{}, fmt.Errorf("render %s at %s: %w", src.RepoURL, short(resolved.SHA), err)
	}
	if t, ok := s.spared(out, resolved.SHA); ok {
		return t, nil
	}
	s.Rendered = &rendered{SHA: resolved.SHA, SpecDigest: specDigest, Digest: out.Digest, Count: out.Count, Children: out.Children,
		Hooks: out.Hooks, RemoteBases: out.RemoteBases}
	s.noteRender(out)
	if specDigest != s.app.SpecDigest() {
		s.Rendered.Source = &src
	}
	return s.targetOf(s.Rendered), nil
}

// noteRender shows how the app was rendered, as Argo CD's
// status.sourceType (one source) or sourceTypes (several), and its
// summary. An answer without types (an older worker's) keeps what the
// status showed.
func (s *appState) noteRender(out contract.RenderResult) {
	switch types := out.SourceTypes; {
	case len(types) == 0:
		return
	case s.app.IsMultiSource():
		s.Status.SourceType, s.Status.SourceTypes = "", types
	default:
		s.Status.SourceType, s.Status.SourceTypes = types[0], nil
	}
	s.Status.Summary = out.Summary
}

func (s *appState) targetOf(r *rendered) contract.Target {
	src := s.app.Spec.Source
	if r.Source != nil {
		src = *r.Source
	}
	return contract.Target{App: s.app.Metadata.Name, Source: src, SHA: r.SHA, Digest: r.Digest,
		Revision: r.Revision, Namespace: s.renderNamespace(), Sources: s.sourcesAt(r), Local: r.Local}
}

// renderNamespace is the first destination's namespace: Helm's
// .Release.Namespace, one for every region.
func (s *appState) renderNamespace() string {
	if d := s.destinations(); len(d) > 0 {
		return d[0].Namespace
	}
	return ""
}

func (r *rendered) commit() string {
	if r.Revision != "" {
		return r.Revision
	}
	return r.SHA
}

// compare diffs the target against every region in parallel.
func (s *appState) compare(ctx workflow.Context, target contract.Target) {
	s.compareRegions(ctx, target, s.destinations())
	s.clearCondition(conditionComparisonError)
}

// compareRegions diffs the target against the given regions (and the child
// apps, when there are any) and folds the result into the status.
func (s *appState) compareRegions(ctx workflow.Context, target contract.Target, dests []app.Target) {
	onTheirOwn := s.regionsOnTheirOwn(ctx)
	var lateErrs map[string]error
	if onTheirOwn {
		dests, lateErrs = s.takeStragglers(ctx, dests)
	}
	started := workflow.Now(ctx)
	futures := make(map[string]workflow.Future, len(dests))
	for _, d := range dests {
		futures[d.Region] = workflow.ExecuteActivity(compareCtx(ctx, d.Region), contract.ActivityCompare,
			contract.CompareInput{Target: target, Region: d.Region, Namespace: d.Namespace, Inventory: s.inventory(d.Region),
				SyncOptions: s.appSyncOptions(), IgnoreDifferences: s.app.Spec.IgnoreDifferences, Project: s.app.ProjectOf()})
	}
	children := s.compareChildren(ctx)
	byRegion := make(map[string][]app.ResourceStatus, len(dests))
	regionErrs := make(map[string]error)
	answered := make(map[string]bool, len(dests))
	// Regions are folded in as they answer, so a region that is down (its
	// activity waits for a worker until regionScheduleToStart) does not hide
	// the others' state from the status query meanwhile. An app of apps
	// folds everything in once its children answer too: until then its
	// status would name the new revision beside the old child rows.
	sel := workflow.NewSelector(ctx)
	for _, d := range dests {
		sel.AddFuture(futures[d.Region], func(f workflow.Future) {
			answered[d.Region] = true
			var out contract.CompareResult
			if err := f.Get(ctx, &out); err != nil {
				regionErrs[d.Region] = err
			} else {
				byRegion[d.Region] = out.Resources
				s.idleAnswer(d.Region, out)
				s.noteExcluded(d.Region, out.Excluded)
			}
			if children == nil {
				s.setResources(ctx, target.Commit(), byRegion, regionErrs)
			}
		})
	}
	for _, region := range waitForAnswers(ctx, sel, futures, answered, onTheirOwn) {
		st := &straggler{future: futures[region], since: started}
		if err := lateErrs[region]; err != nil {
			regionErrs[region], st.overdue = err, true
		}
		s.stragglers[region] = st
	}
	if onTheirOwn {
		s.overdueErrs(workflow.Now(ctx), regionErrs)
	}
	if children != nil {
		var out contract.CompareChildrenResult
		if err := children.Get(ctx, &out); err != nil {
			regionErrs[childrenRegion] = err
		} else {
			byRegion[childrenRegion] = out.Resources
			s.refusedChildren = out.Refused
		}
	}
	s.setResources(ctx, target.Commit(), byRegion, regionErrs)
}

func (s *appState) shouldAutoSync(target contract.Target) bool {
	if !s.app.AutomatedSync() || s.Status.Sync.Status != app.SyncStatusOutOfSync {
		return false
	}
	if s.Rendered.Count == 0 && len(s.Rendered.Children) == 0 && !s.app.AllowEmpty() {
		s.setCondition(conditionSyncError, "automated sync refused: the source renders no resources; set syncPolicy.automated.allowEmpty to allow it")
		return false
	}
	last := s.AutoSync
	if last == nil || last.Key != s.autoSyncKey(target) {
		return true
	}
	// Same (revision, spec) again: only drift is healed, and a failed sync is
	// not retried until Git or the spec changes, as Argo CD does; unless it
	// failed or skipped regions only because they were unreachable and they
	// answer again.
	if last.Unreachable && !s.anyUnreachable() && len(s.stragglers) == 0 {
		return true
	}
	return last.Phase == app.OperationSucceeded && s.app.SelfHeal()
}

func (s *appState) autoSyncKey(t contract.Target) string {
	return t.Commit() + "/" + s.app.SpecDigest()
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
