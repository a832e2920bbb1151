package activities

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/hooks"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/syncplan"
	"github.com/ferry-gitops/ferry/workflows"
)

// SyncWithHooks is the Sync of an app with Sync-phase hooks. A Sync hook
// of wave W runs once the ordinary objects of waves up to W are applied
// and healthy, as in Argo CD; then the Sync activity itself applies the
// whole set, prunes and waits, as for any app. The hook objects are found
// again on a retry, as in RunHooks.
func (r *Region) SyncWithHooks(ctx context.Context, in workflows.SyncInput) (workflows.SyncResult, error) {
	if in.DryRun {
		return r.Sync(ctx, in)
	}
	stop := heartbeatEvery(ctx, heartbeatInterval, "Sync hooks")
	defer stop()
	objs, err := r.load(ctx, in.Region, in.Target)
	if err != nil {
		return workflows.SyncResult{}, err
	}
	cluster, err := r.permitted(ctx, in.Target, in.Namespace, in.SyncOptions, objs)
	if err != nil {
		return workflows.SyncResult{}, err
	}
	all, err := hooks.Of(objs)
	if err != nil {
		return workflows.SyncResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrInvalidManifests, nil)
	}
	var waves []int
	for _, h := range all {
		if h.In(hooks.Sync) && !slices.Contains(waves, h.Wave) {
			waves = append(waves, h.Wave)
		}
	}
	slices.Sort(waves)
	opts, err := app.ParseSyncOptions(in.SyncOptions)
	if err != nil {
		return workflows.SyncResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrInvalidSource, nil)
	}
	ordinary := hookObjects(objs)
	runner, err := r.hookRunner(ctx, cluster)
	if err != nil {
		return workflows.SyncResult{}, classify(err)
	}
	actions := map[app.ResourceKey]app.ResourceResult{}
	var ran workflows.RunHooksResult
	for _, w := range waves {
		if upTo := wavesUpTo(ordinary, w); len(upTo) > 0 {
			cmp, err := r.compareRequest(in.Target.App, in.Namespace, upTo, nil, in.SyncOptions, in.IgnoreDifferences)
			if err != nil {
				return workflows.SyncResult{}, err
			}
			changes, err := cluster.Apply(ctx, kube.ApplyRequest{
				App: in.Target.App, Namespace: in.Namespace, Objects: upTo, Options: cmp.Options, Ignore: cmp.Ignore,
				WaveTimeout: max(in.HealthTimeout, waveTimeout),
				Progress:    func(p kube.Progress) { activity.RecordHeartbeat(ctx, "before Sync hooks: "+p.String()) },
			})
			if changes != nil {
				for _, res := range r.results(changes) {
					if _, seen := actions[res.ResourceKey]; !seen {
						actions[res.ResourceKey] = res
					}
				}
			}
			sofar := workflows.SyncResult{Results: slices.Collect(maps.Values(actions))}
			if kube.IsUnhealthy(err) {
				return sofar, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrSyncFailed, nil)
			}
			if err != nil {
				return sofar, classify(err)
			}
			if err := r.waitSubsetHealthy(ctx, cluster, in, cmp); err != nil {
				return workflows.SyncResult{}, classify(err)
			}
		}
		wave := w
		results, err := runner.Run(ctx, hooks.Request{
			App: in.Target.App, Namespace: in.Namespace, OperationID: in.OperationID, Phase: hooks.Sync,
			Objects: objs, Wave: &wave, CreateNamespace: opts.CreateNamespace,
		})
		ran.Hooks = append(ran.Hooks, r.hookResults(results)...)
		if err != nil {
			return workflows.SyncResult{Hooks: ran.Hooks}, r.classifyHooks(err, ran)
		}
	}
	out, err := r.Sync(ctx, in)
	// An object the early applies created reads "unchanged" in the final
	// one: report what the sync did to it.
	for i, res := range out.Results {
		if early, ok := actions[res.ResourceKey]; ok && res.Action == kube.ActionUnchanged {
			out.Results[i].Action, out.Results[i].Message = early.Action, early.Message
		}
	}
	out.Hooks = ran.Hooks
	return out, err
}

// wavesUpTo are the objects of waves up to w, with every Namespace and CRD
// (which syncplan moves before what needs them anyway).
func wavesUpTo(objs []*unstructured.Unstructured, w int) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		wave, _ := syncplan.WaveOf(o)
		if wave <= w || syncplan.IsNamespace(gvk.Group, gvk.Kind) || syncplan.IsCRD(gvk.Group, gvk.Kind) {
			out = append(out, o)
		}
	}
	return out
}

// waitSubsetHealthy compares objs until none is Progressing or Missing, or
// the sync's health timeout passes (then the hooks run anyway, as the
// Sync activity goes on after its own wait).
func (r *Region) waitSubsetHealthy(ctx context.Context, cluster *kube.Cluster, in workflows.SyncInput, req kube.CompareRequest) error {
	want := map[[3]string]bool{}
	for _, o := range req.Objects {
		gvk := o.GroupVersionKind()
		want[[3]string{gvk.Group, gvk.Kind, o.GetName()}] = true
	}
	deadline := time.Now().Add(in.HealthTimeout)
	for {
		states, err := cluster.Compare(ctx, req)
		if err != nil {
			return err
		}
		waiting := 0
		for _, s := range states {
			if want[[3]string{s.Key.Group, s.Key.Kind, s.Key.Name}] && (s.Health == app.HealthProgressing || s.Health == app.HealthMissing) {
				waiting++
			}
		}
		activity.RecordHeartbeat(ctx, fmt.Sprintf("waiting for %d resources to become healthy before the next Sync hooks", waiting))
		if waiting == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.poll()):
		}
	}
}
