package activities

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// watching tells whether this worker reports every change to the app's
// objects from now on (CompareResult.Watched): its live cache watches all
// of their kinds, its API server answers the probe, and it has a Temporal
// client to signal drift with.
func (r *Region) watching(objs []*unstructured.Unstructured, inventory []app.ResourceKey) bool {
	d := &r.drift
	d.mu.Lock()
	signals := d.client != nil
	d.mu.Unlock()
	return signals && !r.DisableLiveCache && r.Cluster.Unreachable() == nil && r.Cluster.Watching(objs, inventory)
}
