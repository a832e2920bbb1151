package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/workflows"
)

// Region holds the activities of one region's queue.
type Region struct {
	Name    string
	Cluster *kube.Cluster
	Loader  *manifests.Loader
	// HealthPoll is how often a sync checks health while it waits.
	HealthPoll time.Duration
}

// Register adds the region activities to a worker of RegionQueue(r.Name).
func (r *Region) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(r.Compare, activity.RegisterOptions{Name: workflows.ActivityCompare})
	w.RegisterActivityWithOptions(r.Sync, activity.RegisterOptions{Name: workflows.ActivitySync})
	w.RegisterActivityWithOptions(r.DeleteResources, activity.RegisterOptions{Name: workflows.ActivityDeleteResources})
}

// Compare diffs the target manifests against the live state of the region.
func (r *Region) Compare(ctx context.Context, in workflows.CompareInput) (workflows.CompareResult, error) {
	objs, err := r.load(ctx, in.Region, in.Target)
	if err != nil {
		return workflows.CompareResult{}, err
	}
	states, err := r.Cluster.Compare(ctx, kube.CompareRequest{App: in.Target.App, Namespace: in.Namespace, Objects: objs, PreviousKeys: in.Known})
	var objErrs *kube.ObjectErrors
	if err != nil && !(errors.As(err, &objErrs) && len(states) > 0) {
		return workflows.CompareResult{}, classify(err)
	}
	// Objects that could not be compared are Unknown with their reason; the
	// others still count.
	return workflows.CompareResult{Resources: r.statuses(states)}, nil
}

// Sync applies the target in the region, prunes when asked, then waits for
// the resources to become healthy. It heartbeats throughout, so a dead
// worker is noticed in seconds and another one resumes the (idempotent) sync.
func (r *Region) Sync(ctx context.Context, in workflows.SyncInput) (workflows.SyncResult, error) {
	objs, err := r.load(ctx, in.Region, in.Target)
	if err != nil {
		return workflows.SyncResult{}, err
	}
	opts, err := app.ParseSyncOptions(in.SyncOptions)
	if err != nil {
		return workflows.SyncResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrInvalidSource, nil)
	}
	stop := heartbeatEvery(ctx, 2*time.Second, "apply")
	changes, err := r.Cluster.Apply(ctx, kube.ApplyRequest{
		App: in.Target.App, Namespace: in.Namespace, Objects: objs, PreviousKeys: in.Known,
		Prune: in.Prune, DryRun: in.DryRun, CreateNamespace: opts.CreateNamespace,
	})
	stop()
	var out workflows.SyncResult
	if changes != nil {
		out.Results = r.results(changes)
	}
	if err != nil {
		return out, classify(err)
	}
	if in.DryRun {
		return out, nil
	}
	states, err := r.waitHealthy(ctx, in, objs)
	out.Resources = r.statuses(states)
	return out, classify(err)
}

// waitHealthy compares until no resource is Progressing or Missing, or the
// health timeout passes; the last states are the region's status either way.
func (r *Region) waitHealthy(ctx context.Context, in workflows.SyncInput, objs []*unstructured.Unstructured) ([]kube.ResourceState, error) {
	poll := r.poll()
	deadline := time.Now().Add(in.HealthTimeout)
	for {
		states, err := r.Cluster.Compare(ctx, kube.CompareRequest{App: in.Target.App, Namespace: in.Namespace, Objects: objs, PreviousKeys: in.Known})
		if err != nil {
			return nil, err
		}
		waiting := 0
		for _, s := range states {
			if s.Health == app.HealthProgressing || s.Health == app.HealthMissing {
				waiting++
			}
		}
		activity.RecordHeartbeat(ctx, fmt.Sprintf("waiting for %d resources to become healthy", waiting))
		if waiting == 0 || time.Now().After(deadline) {
			return states, nil
		}
		select {
		case <-ctx.Done():
			return states, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// DeleteResources deletes every resource the app owns in the region and
// waits until they are gone.
func (r *Region) DeleteResources(ctx context.Context, in workflows.DeleteInput) (workflows.DeleteResult, error) {
	if in.Region != r.Name {
		return workflows.DeleteResult{}, wrongRegion(r.Name, in.Region)
	}
	stop := heartbeatEvery(ctx, 2*time.Second, "delete")
	defer stop()
	deleted, err := r.Cluster.DeleteAll(ctx, in.App)
	if err != nil {
		return workflows.DeleteResult{}, classify(err)
	}
	for {
		left, err := r.Cluster.Remaining(ctx, in.App, deleted)
		if err != nil {
			return workflows.DeleteResult{}, classify(err)
		}
		if len(left) == 0 {
			return workflows.DeleteResult{Deleted: deleted}, nil
		}
		select {
		case <-ctx.Done():
			return workflows.DeleteResult{}, ctx.Err()
		case <-time.After(r.poll()):
		}
	}
}

// load fetches the target's manifests from the cache, or renders them again
// from Git, and checks they are the ones the workflow rendered.
func (r *Region) load(ctx context.Context, region string, t workflows.Target) ([]*unstructured.Unstructured, error) {
	if region != r.Name {
		return nil, wrongRegion(r.Name, region)
	}
	loaded, err := r.Loader.LoadApp(ctx, manifests.Request{
		RepoURL: t.Source.RepoURL, SHA: t.SHA, Source: t.Source, App: t.App, Namespace: t.Namespace,
	})
	if err != nil {
		return nil, classify(err)
	}
	if loaded.Digest != t.Digest {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q: manifests of %s rendered in region %s differ from the control worker's (digest %.12s, want %.12s): run the same Ferry version on every worker",
			t.App, t.SHA, r.Name, loaded.Digest, t.Digest), workflows.ErrInvalidManifests, nil)
	}
	// The Applications of an app of apps run as apps, not as cluster objects.
	objs := loaded.Objects[:0]
	for _, o := range loaded.Objects {
		if !app.IsApplication(o.GetAPIVersion(), o.GetKind()) {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

func (r *Region) statuses(states []kube.ResourceState) []app.ResourceStatus {
	out := make([]app.ResourceStatus, 0, len(states))
	for _, s := range states {
		out = append(out, app.ResourceStatus{
			ResourceKey: s.Key, Region: r.Name, Status: s.Sync, Health: s.Health, Message: s.Message,
		})
	}
	return out
}

func (r *Region) results(cs *kube.ChangeSet) []app.ResourceResult {
	out := make([]app.ResourceResult, 0, len(cs.Entries))
	for _, c := range cs.Entries {
		out = append(out, app.ResourceResult{ResourceKey: c.Key, Region: r.Name, Action: c.Action, Message: c.Message})
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
		mine, asked, workflows.RegionQueue(mine)), workflows.ErrWrongRegion, nil)
}

// heartbeatEvery heartbeats until the returned stop is called.
func heartbeatEvery(ctx context.Context, every time.Duration, what string) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, what)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}
