package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// Region holds the activities of one region's queue.
type Region struct {
	Name    string
	Cluster Cluster
	// Loader gives the manifests where the worker is a control worker too;
	// HandOver, where it is not, has the control side hand them over.
	Loader   *manifests.Loader
	HandOver *HandOver
	// HealthPoll is how often a sync checks health while it waits.
	HealthPoll time.Duration
	// DisableLiveCache keeps the Cluster's informer cache off: every
	// compare asks the API server, and drift waits for the next poll.
	DisableLiveCache bool
	// Projects reads an app's AppProject, whose rules every sync and hook
	// run is checked against before anything is sent; nil checks nothing.
	Projects ProjectSource
	// Regions are the workers' regions configuration: the region's aliases,
	// server URL and whether it is Argo CD's in-cluster destination, as
	// projects match them.
	Regions *regions.Config
	// RequireImpersonation fails every sync, prune, delete and hook run
	// whose project names no ServiceAccount for the destination
	// (destinationServiceAccounts), the default project's included, rather
	// than writing as the worker itself (region_identity.go).
	RequireImpersonation bool
	// Impersonable is where the ServiceAccounts the worker impersonates
	// may be: a project naming one elsewhere fails its syncs here.
	Impersonable app.ImpersonationScope
	// SystemIgnore is ignored in every app's diffs besides its own
	// ignoreDifferences: Argo CD's resource.customizations.ignoreDifferences.
	SystemIgnore []app.IgnoreDifference
	// Excluded tells which kinds the region leaves alone, as Argo CD's
	// resource.exclusions/inclusions do: they are neither applied, nor
	// compared, nor pruned (region_exclusions.go). Nil excludes nothing.
	Excluded func(group, kind string) bool

	// Lifetime ends the region's live cache and probes when it is done: a
	// region of a cluster Secret that is removed or changed. Nil: they run
	// as long as the process.
	Lifetime context.Context

	drift driftSignals
}

// Register adds the region activities to a worker of RegionQueue(r.Name).
func (r *Region) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(r.Compare, activity.RegisterOptions{Name: contract.ActivityCompare})
	w.RegisterActivityWithOptions(r.Sync, activity.RegisterOptions{Name: contract.ActivitySync})
	w.RegisterActivityWithOptions(r.DeleteResources, activity.RegisterOptions{Name: contract.ActivityDeleteResources})
}

// Compare diffs the target manifests against the live state of the region.
func (r *Region) Compare(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
	ctx = claimed(ctx, in.Target.App, in.Project, in.Namespace)
	defer heartbeatEvery(ctx, heartbeatInterval, "compare")()
	r.watch(ctx, in.Target.App)
	if err := r.unanswered(); err != nil { // region_reachability.go
		return contract.CompareResult{}, err
	}
	all, err := r.loadAll(ctx, in.Region, in.Target)
	if err != nil {
		return contract.CompareResult{}, err
	}
	objs, excluded := r.splitExcluded(ctx, in.Target.App, all)
	opts, err := syncOptionsOf(in.Target.App, in.SyncOptions)
	if err != nil {
		return contract.CompareResult{}, err
	}
	req, err := r.compareRequest(in.Target.App, in.Namespace, objs, in.Inventory, opts, in.IgnoreDifferences)
	if err != nil {
		return contract.CompareResult{}, err
	}
	if req.Prohibits, err = r.prohibits(ctx, in.Project); err != nil {
		return contract.CompareResult{}, err
	}
	watched := r.watching(objs, in.Inventory) // region_watch.go
	// The dry runs of the compare go as the sync's writes would.
	writer := r.writerOf(in.Target.App)
	states, err := writer.Compare(ctx, req)
	if werr := writer.WriteUserFailed(); werr != nil && !isNonRetryable(werr) {
		// Who the dry runs go as could not be learnt now (the app's
		// workflow did not answer in time): compare again, rather than
		// call every object that needed a dry run Unknown until the next poll.
		return contract.CompareResult{}, classify(werr)
	}
	var objErrs *kube.ObjectErrors
	if err != nil && (!errors.As(err, &objErrs) || len(states) == 0 || unreachable(err)) {
		return contract.CompareResult{}, classify(err)
	}
	r.Cluster.NoteCompared(in.Target.App, states)
	// Objects that could not be compared are Unknown with their reason; the
	// others still count.
	return contract.CompareResult{Resources: r.statuses(states), Watched: watched && err == nil, Excluded: excluded}, nil
}

// syncOptionsOf parses the operation's sync options (the app's
// syncOptions and those its sync request adds), once per activity: every
// step after reads the parsed value. Options that do not parse fail for
// good: the app's spec has to change.
func syncOptionsOf(appName string, items []string) (app.SyncOptions, error) {
	opts, err := app.ParseSyncOptions(items)
	if err != nil {
		return app.SyncOptions{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("app %q: spec.syncPolicy.syncOptions: %v", appName, err), contract.ErrInvalidSource, nil)
	}
	return opts, nil
}

// compareRequest compiles the app's ignoreDifferences, which fails for
// good when they are wrong, into the compare of objs.
func (r *Region) compareRequest(appName, namespace string, objs []*unstructured.Unstructured, inventory []app.ResourceKey,
	opts app.SyncOptions, ignore []app.IgnoreDifference) (kube.CompareRequest, error) {
	rules, err := diff.Compile(append(slices.Clip(ignore), r.SystemIgnore...))
	if err != nil {
		return kube.CompareRequest{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("app %q: %v", appName, err), contract.ErrInvalidSource, nil)
	}
	return kube.CompareRequest{App: appName, Namespace: namespace, Objects: objs, Inventory: r.inventoryIncluded(inventory), Options: opts, Ignore: rules}, nil
}

// waveTimeout bounds the wait for one wave to become healthy before the
// next, as a rollout stage's.
const waveTimeout = 5 * time.Minute

// DeleteResources deletes every resource the app owns in the region and
// waits until they are gone.
func (r *Region) DeleteResources(ctx context.Context, in contract.DeleteInput) (contract.DeleteResult, error) {
	if in.Region != r.Name {
		return contract.DeleteResult{}, wrongRegion(r.Name, in.Region)
	}
	ctx = claimed(ctx, in.App, in.Project, in.Namespace)
	r.watch(ctx, in.App)
	stop := heartbeatEvery(ctx, heartbeatInterval, "delete")
	defer stop()
	deleted, awaiting, err := r.writerOf(in.App).DeleteAllConfirmed(ctx, in.App, in.Propagation, in.Confirmed)
	if err != nil {
		return contract.DeleteResult{}, classify(err)
	}
	if len(awaiting) > 0 {
		return contract.DeleteResult{AwaitingConfirmation: awaiting}, nil
	}
	err = kube.Poll(ctx, r.poll(), func(ctx context.Context) (bool, error) {
		left, err := r.Cluster.Remaining(ctx, in.App, deleted)
		return err == nil && len(left) == 0, err
	})
	if err != nil && ctx.Err() != nil {
		return contract.DeleteResult{}, ctx.Err()
	}
	if err != nil {
		return contract.DeleteResult{}, classify(err)
	}
	return contract.DeleteResult{Deleted: deleted}, nil
}

// load is loadAll less the kinds the region excludes.
func (r *Region) load(ctx context.Context, region string, t contract.Target) ([]*unstructured.Unstructured, error) {
	objs, err := r.loadAll(ctx, region, t)
	if err != nil {
		return nil, err
	}
	return r.keptObjects(ctx, t.App, objs), nil
}

// loadAll gives the target's manifests, checked to be the ones the
// workflow rendered: from the worker's own loader where it is a control
// worker too, else handed over by the control side (region_handover.go),
// and never rendered here.
func (r *Region) loadAll(ctx context.Context, region string, t contract.Target) ([]*unstructured.Unstructured, error) {
	if region != r.Name {
		return nil, wrongRegion(r.Name, region)
	}
	var objs []*unstructured.Unstructured
	if r.HandOver != nil {
		var err error
		if objs, err = r.HandOver.load(ctx, r, t); err != nil {
			return nil, err
		}
	} else {
		loaded, err := loadRendered(ctx, r.Loader, t, r.repoCheck(ctx, t.App), "in region "+r.Name)
		if err != nil {
			return nil, err
		}
		objs = loaded.Objects
	}
	// The Applications of an app of apps run as apps, not as cluster objects.
	kept := objs[:0]
	for _, o := range objs {
		if !app.IsApplication(o.GetAPIVersion(), o.GetKind()) {
			kept = append(kept, o)
		}
	}
	return kept, nil
}

func (r *Region) statuses(states []kube.ResourceState) []app.ResourceStatus {
	out := make([]app.ResourceStatus, 0, len(states))
	for _, s := range states {
		out = append(out, app.ResourceStatus{
			ResourceKey: s.Key, Region: r.Name, Status: s.Sync, Health: s.Health, HealthMessage: s.HealthMessage, Message: s.Message,
			RequiresPruning: s.RequiresPruning, CountsAs: s.CountsAs, SyncWave: s.Wave,
		})
	}
	return out
}

// results are the change set's entries but the hooks', which travel as
// hook results (SyncResult.Hooks) for the workflow to delete as their
// policy asks.
func (r *Region) results(cs *kube.ChangeSet) []app.ResourceResult {
	if cs == nil {
		return nil
	}
	out := make([]app.ResourceResult, 0, len(cs.Entries))
	for _, c := range cs.Entries {
		if c.Hook == "" {
			out = append(out, app.ResourceResult{ResourceKey: c.Key, Region: r.Name, Action: c.Action, Message: c.Message})
		}
	}
	return out
}

func (r *Region) poll() time.Duration {
	if r.HealthPoll <= 0 {
		return 500 * time.Millisecond
	}
	return r.HealthPoll
}

func wrongRegion(mine, asked string) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"a worker of region %s got work for region %s: check the --region of the workers polling %s",
		mine, asked, contract.RegionQueue(mine)), contract.ErrWrongRegion, nil)
}

// heartbeatInterval is how often a long activity heartbeats: well inside
// the heartbeat timeout the workflow gives it (10 s).
const heartbeatInterval = 2 * time.Second

// heartbeatEvery heartbeats every interval until the returned stop is
// called; stop returns once no heartbeat is in flight, so none is sent
// after the activity returns. The first beat comes after one interval, so
// a short activity sends none: its heartbeat timeout still notices a dead
// worker. Called outside an activity (a benchmark calls Compare directly),
// it sends nothing.
func heartbeatEvery(ctx context.Context, every time.Duration, what string) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, what)
			}
		}
	}()
	return func() { close(done); <-exited }
}
