package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/hooks"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Sync applies the target in the region (kube.Cluster.Apply: wave by wave,
// prune when asked) and reports every change and the region's state right
// after, whether the sync went well or not. It heartbeats throughout, with
// where the sync is, so a dead worker is noticed in seconds and another
// one resumes the (idempotent) sync. A region whose API server stops
// answering mid-sync ends it Unreachable (whileAnswering).
func (r *Region) Sync(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
	return r.sync(ctx, in, false)
}

// SyncWithHooks is the Sync of an app with Sync-phase hooks: the same
// sync, with the hooks of each wave run once that wave's objects are
// applied, as in Argo CD. A retried attempt finds the hook objects the
// first one created, as RunHooks does.
func (r *Region) SyncWithHooks(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
	return r.sync(ctx, in, true)
}

func (r *Region) sync(ctx context.Context, in contract.SyncInput, withHooks bool) (contract.SyncResult, error) {
	ctx = claimed(ctx, in.Target.App, in.Project, in.Namespace)
	// Heartbeats while the manifests load (a render on a cache miss), so
	// that it does not look like a dead worker.
	stop := heartbeatEvery(ctx, heartbeatInterval, "sync")
	defer stop()
	var out contract.SyncResult
	silent, err := r.answering(ctx, func(ctx context.Context) (err error) {
		out, err = r.syncAnswering(ctx, in, withHooks)
		return err
	})
	if silent != nil {
		out.Failure, out.Resources = r.silencedFailure(silent), nil
		return out, nil
	}
	return out, err
}

// syncAnswering is the sync while the region answers (whileAnswering).
func (r *Region) syncAnswering(ctx context.Context, in contract.SyncInput, withHooks bool) (contract.SyncResult, error) {
	r.watch(ctx, in.Target.App)
	objs, err := r.load(ctx, in.Region, in.Target)
	if err != nil {
		return contract.SyncResult{}, err
	}
	opts, err := syncOptionsOf(in.Target.App, in.SyncOptions)
	if err != nil {
		return contract.SyncResult{}, err
	}
	cluster, err := r.permitted(ctx, in.Target, in.Namespace, opts, objs)
	if err != nil {
		return contract.SyncResult{}, err
	}
	cmp, err := r.compareRequest(in.Target.App, in.Namespace, objs, in.Inventory, opts, in.IgnoreDifferences)
	if err != nil {
		return contract.SyncResult{}, err
	}
	// A selective sync applies (and prunes) only what it names; the state
	// after is the whole app's, so the rest shows OutOfSync.
	toApply, inventory, err := selected(objs, cmp.Inventory, in.Namespace, in.Selection)
	if err != nil {
		return contract.SyncResult{}, err
	}
	waits := givesPlaceOnWait(ctx, in.OnboardPlace)
	req := kube.ApplyRequest{
		App: in.Target.App, Namespace: in.Namespace, Objects: toApply, Inventory: inventory,
		Prune: in.Prune, PruneCheck: r.pruneCheck(ctx, in.Target), PruneConfirmed: in.PruneConfirmed, NamespaceMetadata: in.NamespaceMetadata, DryRun: in.DryRun, Options: opts, Ignore: cmp.Ignore,
		WaveTimeout: max(in.HealthTimeout, waveTimeout), WaitLast: in.WaitHealthy,
		Progress: func(p kube.Progress) {
			if p.Stage == kube.StageWait {
				waits()
			}
			activity.RecordHeartbeat(ctx, p.String())
		},
	}
	var out contract.SyncResult
	if withHooks && !in.DryRun {
		if req.SyncHooks, err = r.syncHooks(ctx, cluster, in, objs, opts, &out, waits); err != nil {
			return contract.SyncResult{}, err
		}
	}
	changes, err := cluster.Apply(ctx, req)
	out.Results = r.results(changes)
	if changes != nil {
		out.AwaitingPrune = changes.AwaitingPrune
	}
	if !in.DryRun && (err == nil || failedForGood(err)) {
		// The region's state right after the sync, as Argo CD refreshes an
		// app when its operation ends: a failed sync shows what it left.
		out.Resources = r.statesAfter(ctx, cluster, cmp)
	}
	return r.outcome(out, err)
}

// syncHooks runs the Sync-phase hooks of objs through the hook runner,
// keeping their results in out.Hooks (the workflow deletes them as their
// policy asks); nil when there are none.
func (r *Region) syncHooks(ctx context.Context, cluster Cluster, in contract.SyncInput, objs []*unstructured.Unstructured,
	opts app.SyncOptions, out *contract.SyncResult, waits func()) (*kube.SyncHooks, error) {
	all, err := hooks.Of(objs)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidManifests, nil)
	}
	var waves []int
	for _, h := range all {
		if h.In(app.HookTypeSync) {
			waves = append(waves, h.Wave)
		}
	}
	if len(waves) == 0 {
		return nil, nil
	}
	runner, err := r.hookRunner(ctx, cluster, waits)
	if err != nil {
		return nil, classify(err)
	}
	run := func(ctx context.Context, wave int) ([]kube.Change, error) {
		results, err := runner.Run(ctx, hooks.Request{
			App: in.Target.App, Namespace: in.Namespace, OperationID: in.OperationID, Phase: app.HookTypeSync,
			Objects: objs, Wave: &wave, CreateNamespace: opts.CreateNamespace,
		})
		out.Hooks = append(out.Hooks, r.hookResults(results)...)
		changes := make([]kube.Change, len(results))
		for i, h := range results {
			action := kube.ActionCreated
			if h.Status != hooks.Succeeded {
				action = kube.ActionFailed
			}
			changes[i] = kube.Change{Key: h.Key, Action: action, Message: h.Message, Hook: string(h.Phase)}
		}
		return changes, err
	}
	return &kube.SyncHooks{Waves: waves, Run: run}, nil
}

// statesAfter compares the region once, without waiting for anything; nil
// when the compare fails (the next reconcile tells).
func (r *Region) statesAfter(ctx context.Context, cluster Cluster, req kube.CompareRequest) []app.ResourceStatus {
	states, err := cluster.Compare(ctx, req)
	var objErrs *kube.ObjectErrors
	if err != nil && (!errors.As(err, &objErrs) || len(states) == 0) {
		return nil
	}
	// As a compare's: what becomes healthy (or Degraded) after the sync is
	// signalled, so that the app need not wait for its settle poll.
	r.Cluster.NoteCompared(req.App, states)
	return r.statuses(states)
}

// outcome is how the sync ends for the workflow. A failure that another
// attempt of the activity cannot fix (the API server refused an object, a
// wave did not become healthy, a hook failed) travels inside the result,
// beside every change so far and the region's state: Temporal keeps no
// result of a failed activity. Anything else fails the activity, which is
// retried.
func (r *Region) outcome(out contract.SyncResult, err error) (contract.SyncResult, error) {
	switch {
	case err == nil:
		return out, nil
	case kube.IsUnhealthy(err), kube.IsRefused(err):
		out.Failure = &contract.SyncFailure{Type: contract.ErrSyncFailed, Message: err.Error()}
	case hooks.IsFailed(err), hooks.IsInvalid(err):
		out.Failure = &contract.SyncFailure{Type: contract.ErrHookFailed, Message: r.Name + ": " + err.Error()}
	default:
		return out, classify(err)
	}
	return out, nil
}

func failedForGood(err error) bool {
	return kube.IsUnhealthy(err) || kube.IsRefused(err) || hooks.IsFailed(err) || hooks.IsInvalid(err)
}
