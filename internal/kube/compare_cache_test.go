package kube

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

func putN(rc *resultCache, prefix string, n int) {
	live := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}
	for i := range n {
		k := cacheKey{app: prefix, key: app.ResourceKey{Kind: "ConfigMap", Name: fmt.Sprint(i)}}
		rc.put(k, cacheVersion{}, live, cachedResult{sync: app.SyncStatusSynced})
	}
}

// The compare cache drops entries older than an hour once it is large, and
// a sweep that finds the entries young is not repeated on every write: the
// next waits until the cache has doubled (an onboarding of 5,000 apps
// passed over 50,000 young entries on each of its writes).
func TestResultCacheSweepsAsItDoubles(t *testing.T) {
	rc := newResultCache()
	putN(rc, "old", minSweepAt)
	for k, e := range rc.entries {
		e.at = e.at.Add(-2 * time.Hour)
		rc.entries[k] = e
	}
	putN(rc, "new", 1)
	assert.Equal(t, 1, len(rc.entries), "the hour-old entries are dropped when the cache has reached its size")

	putN(rc, "young", minSweepAt)
	assert.Equal(t, minSweepAt+1, len(rc.entries), "young entries stay")
	stale := cacheKey{app: "stale"}
	rc.entries[stale] = cacheEntry{at: time.Now().Add(-2 * time.Hour)}
	putN(rc, "more", minSweepAt/2)
	_, kept := rc.entries[stale]
	assert.True(t, kept, "no sweep before the cache doubles")
	putN(rc, "most", minSweepAt)
	_, kept = rc.entries[stale]
	assert.False(t, kept, "the sweep comes when the cache has doubled")
}
