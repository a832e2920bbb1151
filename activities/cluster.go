package activities

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Cluster is what the region activities use of their region's cluster,
// defined here by its consumer as controller-runtime's are: a
// *kube.Cluster in the worker. The decisions of a sync (what is in sync,
// what to prune, the order of waves and hooks) are kube.Cluster's, so the
// unit tests of the activities run a kube.Cluster over a fake API in
// memory (fakecluster_test.go), not a fake of this interface.
type Cluster interface {
	// The verbs of a sync.
	Compare(ctx context.Context, req kube.CompareRequest) ([]kube.ResourceState, error)
	Apply(ctx context.Context, req kube.ApplyRequest) (*kube.ChangeSet, error)
	DeleteAllConfirmed(ctx context.Context, appName, propagation string, confirmed bool) (deleted, awaiting []app.ResourceKey, err error)
	Remaining(ctx context.Context, appName string, keys []app.ResourceKey) ([]app.ResourceKey, error)

	// What the project check reads (region_project.go).
	Placements(defaultNS string, objs []*unstructured.Unstructured) ([]app.PlacedObject, error)
	NamespaceExists(ctx context.Context, name string) (bool, error)

	// Who writes (region_identity.go), and the clients of the hook runner
	// (hooks.go), which writes as the sync does.
	AsResolved(resolve func(ctx context.Context) (string, error)) *kube.Cluster
	WriteUser(ctx context.Context) (string, error)
	WriteUserFailed() error
	Writer(ctx context.Context) (dynamic.Interface, error)
	RESTMapper() meta.RESTMapper
	HealthChecker() health.Checker

	// The live cache, drift and reachability (region_drift.go,
	// region_watch.go, region_reachability.go).
	LiveCacheEnabled() bool
	EnableLiveCache(ctx context.Context, onDrift func(kube.Drift))
	WatchReachability(ctx context.Context, interval time.Duration, fn func(kube.Reachability))
	Unreachable() error
	Watching(objs []*unstructured.Unstructured, previous []app.ResourceKey) bool
	NoteCompared(appName string, states []kube.ResourceState)
}

var _ Cluster = (*kube.Cluster)(nil)
