package workflows

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// hooksChange versions sync hooks: an app runs its hooks only when its
// render counted some, and only from the version on. Apps without hooks
// issue the commands they always did; a run that rendered hooks before
// the change (a worker of an older Ferry ignored them) replays as it ran.
const hooksChange = "sync-hooks"

// hooksTimeout bounds a hook activity; each hook ends on its own timeout
// much earlier (internal/hooks), and a dead worker is noticed by heartbeat.
const hooksTimeout = 24 * time.Hour

var hooksNonRetryable = append([]string{contract.ErrHookFailed, contract.ErrSyncFailed}, permanent...)

func hooksCtx(ctx workflow.Context, region, summary string) workflow.Context {
	return withActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                summary,
		TaskQueue:              regionQueue(ctx, region),
		ScheduleToStartTimeout: regionScheduleToStart,
		StartToCloseTimeout:    hooksTimeout,
		HeartbeatTimeout:       writeHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 10, NonRetryableErrorTypes: hooksNonRetryable,
		},
	})
}

// hookOp is the hooks' side of the running operation.
type hookOp struct {
	// base identifies the operation for the app's whole life: its number
	// and a tag of the app's workflow chain, which continue-as-new keeps
	// and a delete and re-create changes.
	base    string
	attempt int64
}

// runID identifies one attempt of the operation: its hook objects are
// named and marked by it, so a retried attempt runs its hooks again.
func (h *hookOp) runID() string {
	if h.attempt == 0 {
		return h.base
	}
	return fmt.Sprintf("%s-r%d", h.base, h.attempt)
}

func (s *appState) hookCount(phase string) int {
	if s.Rendered == nil {
		return 0
	}
	return s.Rendered.Hooks[phase]
}

// hooksOn tells whether the app runs hooks now: its render has some and
// the workflow is at the hooks version. Only such apps record the version.
func (s *appState) hooksOn(ctx workflow.Context) bool {
	if s.Rendered == nil || len(s.Rendered.Hooks) == 0 {
		return false
	}
	return changeVersion(ctx, hooksChange) >= 1
}

// beginHooks prepares the running operation's hooks; nil for an app
// without hooks and for a dry run, which runs none.
// A selective sync runs none either, as in Argo CD.
func (s *appState) beginHooks(ctx workflow.Context, p syncParams) *hookOp {
	if p.dryRun || p.selective() || !s.hooksOn(ctx) {
		return nil
	}
	return &hookOp{base: s.operationID() + "-" + chainTag(ctx)}
}

// chainTag is a short digest of the first run of the app's workflow chain:
// the same across continue-as-new (FirstRunID), another for an app deleted
// and created again under the same name.
func chainTag(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	id := info.FirstRunID
	if id == "" {
		id = info.WorkflowExecution.RunID
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return fmt.Sprintf("%08x", h.Sum32())
}

// versionPreSyncUnreachable: when the PreSync hooks failed only in regions
// that could not be reached (their API server stopped answering while a
// hook ran, or no worker took the hooks), the other regions go on to their
// sync and those regions are shown Unreachable, as a region's sync that
// ends Unreachable is; the operation fails Unreachable, and the app syncs
// them once they answer. Before, the PreSync phase failed in every region.
const versionPreSyncUnreachable = "presync-unreachable"

// preSync runs the PreSync hooks in dests; when one fails, the SyncFail
// hooks run and the error says why: nothing of the Sync phase is applied.
// When they failed only in unreachable regions, silent names those
// regions and why, for the caller to leave out (versionPreSyncUnreachable).
func (s *appState) preSync(ctx workflow.Context, op *operation, dests []app.Target) (_ []app.ResourceResult, silent map[string]error, _ error) {
	if s.hookCount(contract.HookPreSync) == 0 {
		return nil, nil, nil
	}
	runID := op.hooks.runID()
	op.state.Message = "running PreSync hooks"
	s.publish(ctx)
	ran, failed, errs := runHookPhase(ctx, op.target, dests, runID, contract.HookPreSync, s.hookSyncOptions(), s.app.ProjectOf(), s.onboardPlace(ctx))
	results := hookResourceResults(ran)
	if len(failed) == 0 {
		return results, nil, nil
	}
	if allUnreachable(errs) && changeVersion(ctx, versionPreSyncUnreachable) >= 1 {
		return results, errs, nil
	}
	err := &syncError{msg: "PreSync hooks failed: " + strings.Join(failed, "; ") + "; nothing of the Sync phase was applied"}
	return append(results, s.syncFail(ctx, op, dests, err)...), nil, err
}

// syncFail runs the SyncFail hooks after a failed PreSync or Sync phase
// and adds their outcome to err's message.
func (s *appState) syncFail(ctx workflow.Context, op *operation, dests []app.Target, err *syncError) []app.ResourceResult {
	// A terminated operation runs no SyncFail hooks: it stops, as Argo
	// CD's does.
	if op.hooks == nil || s.hookCount(contract.HookSyncFail) == 0 || len(dests) == 0 || op.terminated != "" {
		return nil
	}
	ran, failed, _ := runHookPhase(ctx, op.target, dests, op.hooks.runID(), contract.HookSyncFail, s.hookSyncOptions(), s.app.ProjectOf(), "")
	if len(failed) > 0 {
		err.msg += "; SyncFail hooks failed too: " + strings.Join(failed, "; ")
	} else {
		err.msg += fmt.Sprintf("; %d SyncFail hooks ran", len(ran))
	}
	return hookResourceResults(ran)
}

// syncActivity is the activity that syncs a region, and the operation ID
// it gets: an app with Sync-phase hooks runs them within the sync.
func (s *appState) syncActivity(op *operation) (name, id string, options func(workflow.Context, string, string) workflow.Context) {
	if op.hooks != nil && s.hookCount(contract.HookSync) > 0 {
		return contract.ActivitySyncWithHooks, op.hooks.runID(), hooksCtx
	}
	return contract.ActivitySync, op.id(), syncCtx
}

// syncHooksRan folds the Sync-phase hooks a region ran (also when its sync
// failed) into results, and deletes those their policy wants gone.
func (s *appState) syncHooksRan(ctx workflow.Context, op *operation, out contract.SyncResult, err error) []app.ResourceResult {
	ran := out.Hooks
	if d, ok := hookDetails(err); ok {
		ran = d.Hooks
	}
	if len(ran) == 0 || op.hooks == nil {
		return nil
	}
	deleteHooks(ctx, s.app.Metadata.Name, op.hooks.runID(), contract.HookSync, ran)
	return hookResourceResults(ran)
}

func (s *appState) hookSyncOptions() []string {
	if sp := s.app.Spec.SyncPolicy; sp != nil {
		return sp.SyncOptions
	}
	return nil
}

// postDelete runs the PostDelete hooks once a cascading delete removed the
// app's resources; a failure keeps the app.
func (s *appState) postDelete(ctx workflow.Context, dests []app.Target) error {
	if s.hookCount(contract.HookPostDelete) == 0 || !s.hooksOn(ctx) {
		return nil
	}
	runID := s.operationID() + "-" + chainTag(ctx) + "-delete"
	_, failed, _ := runHookPhase(ctx, s.targetOf(s.Rendered), dests, runID, contract.HookPostDelete, s.hookSyncOptions(), s.app.ProjectOf(), "")
	if len(failed) > 0 {
		return fmt.Errorf("app %q: its resources are deleted, but PostDelete hooks failed: %s; the app is kept: fix the hook and delete it again",
			s.app.Metadata.Name, strings.Join(failed, "; "))
	}
	return nil
}

// runHookPhase runs one phase's hooks in every region of dests at once,
// then deletes the objects whose delete policy asked for it. It returns
// every region's results, a message per region that failed, and the
// error of each region that failed. project is the app's, for the region
// to check the hooks against when the app's own workflow runs them; ""
// has the region ask the app's workflow (a PostSync hook run). place is
// the app's place at the onboarding gate, for the region to give back as
// the hooks wait (contract.RunHooksInput.OnboardPlace); "": none.
func runHookPhase(ctx workflow.Context, target contract.Target, dests []app.Target, runID, phase string, opts []string, project, place string) (
	ran []contract.HookResult, failed []string, errs map[string]error) {
	futures := make([]workflow.Future, len(dests))
	for i, d := range dests {
		futures[i] = workflow.ExecuteActivity(hooksCtx(ctx, d.Region, hooksSummary(phase, d.Region)), contract.ActivityRunHooks, contract.RunHooksInput{
			Target: target, Region: d.Region, Namespace: d.Namespace, OperationID: runID, Phase: phase, SyncOptions: opts, Project: project,
			OnboardPlace: place,
		})
	}
	errs = map[string]error{}
	for i, d := range dests {
		var out contract.RunHooksResult
		err := futures[i].Get(ctx, &out)
		if details, ok := hookDetails(err); ok {
			out = details
		}
		ran = append(ran, out.Hooks...)
		if err != nil {
			failed = append(failed, hookFailure(ctx, d.Region, err))
			errs[d.Region] = err
		}
	}
	deleteHooks(ctx, target.App, runID, phase, ran)
	return ran, failed, errs
}

// deleteHooks deletes, region by region at once, the hook objects whose
// delete policy asked for it. A failure is logged: the object stays, and
// BeforeHookCreation replaces it next time.
func deleteHooks(ctx workflow.Context, appName, runID, phase string, ran []contract.HookResult) {
	byRegion := map[string][]app.ResourceKey{}
	for _, h := range ran {
		if h.Delete {
			byRegion[h.Region] = append(byRegion[h.Region], h.ResourceKey)
		}
	}
	regions := workflow.DeterministicKeys(byRegion)
	futures := make([]workflow.Future, len(regions))
	for i, region := range regions {
		futures[i] = workflow.ExecuteActivity(hooksCtx(ctx, region, deleteHooksSummary(phase, region)), contract.ActivityDeleteHooks, contract.DeleteHooksInput{
			App: appName, Region: region, OperationID: runID, Phase: phase, Hooks: byRegion[region],
		})
	}
	for i, f := range futures {
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("delete hooks per their delete policy failed", "region", regions[i], "error", err)
		}
	}
}

// hookDetails are the results a failed hook activity carries.
func hookDetails(err error) (contract.RunHooksResult, bool) {
	var appErr *temporal.ApplicationError
	var out contract.RunHooksResult
	if errors.As(err, &appErr) && appErr.Type() == contract.ErrHookFailed && appErr.HasDetails() && appErr.Details(&out) == nil {
		return out, true
	}
	return contract.RunHooksResult{}, false
}

func hookFailure(ctx workflow.Context, region string, err error) string {
	msg := rootMessage(ctx, err)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == contract.ErrHookFailed {
		msg = appErr.Message() // without the error type: the message says it all
	}
	if strings.HasPrefix(msg, region+": ") {
		return msg
	}
	return region + ": " + msg
}

func hookResourceResults(ran []contract.HookResult) []app.ResourceResult {
	out := make([]app.ResourceResult, len(ran))
	for i, h := range ran {
		action := app.ActionCreated
		if h.Status != "Succeeded" {
			action = app.ActionFailed
		}
		out[i] = app.ResourceResult{ResourceKey: h.ResourceKey, Region: h.Region, Action: action,
			Message: h.Phase + " hook " + strings.ToLower(h.Status) + ": " + h.Message, HookType: h.Phase, HookPhase: h.Status}
	}
	return out
}
