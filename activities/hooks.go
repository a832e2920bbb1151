package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/hooks"
)

// RegisterHooks adds the hook activities to a worker of RegionQueue(r.Name).
func (r *Region) RegisterHooks(w worker.Registry) {
	w.RegisterActivityWithOptions(r.RunHooks, activity.RegisterOptions{Name: contract.ActivityRunHooks})
	w.RegisterActivityWithOptions(r.DeleteHooks, activity.RegisterOptions{Name: contract.ActivityDeleteHooks})
	w.RegisterActivityWithOptions(r.SyncWithHooks, activity.RegisterOptions{Name: contract.ActivitySyncWithHooks})
}

// RunHooks runs one phase's hooks in the region, wave by wave, and waits
// for them; it heartbeats throughout. A retried attempt (its worker died)
// finds the hook objects the first one created and waits for those. A hook
// that fails ends it with the non-retryable ErrHookFailed, carrying the
// results so far. A region whose API server stops answering while its
// hooks run (a Job waited for, a request that hangs) ends it at once with
// the non-retryable ErrUnreachable (whileAnswering), instead of at the
// hook's timeout.
func (r *Region) RunHooks(ctx context.Context, in contract.RunHooksInput) (contract.RunHooksResult, error) {
	ctx = claimed(ctx, in.Target.App, in.Project, in.Namespace)
	// Heartbeats while the manifests load (a render on a cache miss), so
	// that it does not look like a dead worker.
	stop := heartbeatEvery(ctx, heartbeatInterval, string(in.Phase)+" hooks")
	defer stop()
	var out contract.RunHooksResult
	silent, err := r.answering(ctx, func(ctx context.Context) (err error) {
		out, err = r.runHooks(ctx, in)
		return err
	})
	if silent != nil {
		return contract.RunHooksResult{}, r.silencedHooks("its "+in.Phase+" hooks", silent)
	}
	return out, err
}

// runHooks is RunHooks while the region answers.
func (r *Region) runHooks(ctx context.Context, in contract.RunHooksInput) (contract.RunHooksResult, error) {
	objs, err := r.load(ctx, in.Region, in.Target)
	if err != nil {
		return contract.RunHooksResult{}, err
	}
	opts, err := syncOptionsOf(in.Target.App, in.SyncOptions)
	if err != nil {
		return contract.RunHooksResult{}, err
	}
	cluster, err := r.permitted(ctx, in.Target, in.Namespace, opts, objs)
	if err != nil {
		return contract.RunHooksResult{}, err
	}
	runner, err := r.hookRunner(ctx, cluster, givesPlaceOnWait(ctx, in.OnboardPlace))
	if err != nil {
		return contract.RunHooksResult{}, classify(err)
	}
	results, err := runner.Run(ctx, hooks.Request{
		App: in.Target.App, Namespace: in.Namespace, OperationID: in.OperationID, Phase: app.HookType(in.Phase),
		Objects: objs, CreateNamespace: opts.CreateNamespace,
	})
	out := contract.RunHooksResult{Hooks: r.hookResults(results)}
	return out, r.classifyHooks(err, out)
}

// DeleteHooks deletes the hook objects of one run that their delete policy
// wants gone. It can be repeated: an object already gone, or created by
// another run, is left alone. A region whose API server stops answering
// ends it with the non-retryable ErrUnreachable, as RunHooks.
func (r *Region) DeleteHooks(ctx context.Context, in contract.DeleteHooksInput) error {
	if in.Region != r.Name {
		return wrongRegion(r.Name, in.Region)
	}
	silent, err := r.answering(ctx, func(ctx context.Context) error {
		runner, err := r.hookRunner(ctx, r.writerOf(in.App), func() {})
		if err != nil {
			return err
		}
		return runner.Delete(ctx, in.App, in.OperationID, app.HookType(in.Phase), in.Hooks)
	})
	if silent != nil {
		return r.silencedHooks("the deletion of its "+in.Phase+" hooks", silent)
	}
	return classify(err)
}

// hookRunner runs hooks in the region's cluster, heartbeating as it waits
// and calling waits then (givesPlaceOnWait).
// Every request of a hook run goes as cluster writes: hooks are a sync's
// writes, and the ServiceAccount that makes a hook also reads it back.
func (r *Region) hookRunner(ctx context.Context, cluster Cluster, waits func()) (*hooks.Runner, error) {
	dyn, err := cluster.Writer(ctx)
	if err != nil {
		return nil, err
	}
	return &hooks.Runner{
		Dynamic: dyn, Mapper: cluster.RESTMapper(), Poll: r.poll(), Health: cluster.HealthChecker(),
		Progress: func(msg string) {
			waits()
			activity.RecordHeartbeat(ctx, msg)
		},
	}, nil
}

func (r *Region) hookResults(results []hooks.Result) []contract.HookResult {
	out := make([]contract.HookResult, len(results))
	for i, h := range results {
		out[i] = contract.HookResult{ResourceKey: h.Key, Region: r.Name, Phase: string(h.Phase), Wave: h.Wave,
			Status: string(h.Status), Message: h.Message, Delete: h.Delete}
	}
	return out
}

// classifyHooks makes a failed hook, or one that cannot be run as written,
// the non-retryable ErrHookFailed with the results so far as its details.
func (r *Region) classifyHooks(err error, sofar contract.RunHooksResult) error {
	if hooks.IsFailed(err) || hooks.IsInvalid(err) {
		return temporal.NewNonRetryableApplicationError(r.Name+": "+err.Error(), contract.ErrHookFailed, nil, sofar)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return classify(err)
}
