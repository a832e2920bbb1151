package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// resultCache keeps the last comparison of each object, so that an
// unchanged object is not dry-run again: the incremental compare.
type resultCache struct {
	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
	// sweepAt is the size at which put next drops expired entries.
	sweepAt int
}

type cacheKey struct {
	app string
	key app.ResourceKey
}

// cacheVersion is everything a comparison depends on but the live object
// (cacheEntry's liveRV and liveSpec).
type cacheVersion struct {
	desired string // task.digest: the desired object and write options
	uid     string // the live object's UID: a re-created object starts over
	rules   string // diff.Rules.Digest
}

type cachedResult struct {
	sync    app.SyncStatusCode
	message string
}

type cacheEntry struct {
	version cacheVersion
	// liveRV is the live object's resourceVersion, and liveSpec its
	// specDigest: a new resourceVersion with the same digest is a status
	// report, which no comparison looks at.
	liveRV, liveSpec string
	result           cachedResult
	at               time.Time
}

// minSweepAt is the size at which put first drops expired entries (an
// hour old). After a sweep the next comes when the cache has doubled, so
// that a fleet whose entries are all young (the onboarding of 5,000 apps
// of 10 objects: 50,000) is not passed over on every write, and the
// passes cost each write a constant share.
const minSweepAt = 20000

func newResultCache() *resultCache {
	return &resultCache{entries: map[cacheKey]cacheEntry{}, sweepAt: minSweepAt}
}

// get returns the result stored for k at version v and the live object
// live, if it is younger than ttl. A live object whose resourceVersion
// moved on by its status alone (a controller's report: a Deployment's
// rollout writes it a few times) still matches, and the entry learns its
// new resourceVersion.
func (rc *resultCache) get(k cacheKey, v cacheVersion, live *unstructured.Unstructured, ttl time.Duration) (cachedResult, bool) {
	if ttl <= 0 {
		return cachedResult{}, false
	}
	rv := live.GetResourceVersion()
	rc.mu.Lock()
	e, ok := rc.entries[k]
	rc.mu.Unlock()
	if !ok || e.version != v || time.Since(e.at) > ttl {
		return cachedResult{}, false
	}
	if e.liveRV == rv {
		return e.result, true
	}
	if e.liveSpec == "" || specDigest(live) != e.liveSpec {
		return cachedResult{}, false
	}
	rc.mu.Lock()
	if cur, ok := rc.entries[k]; ok && cur.version == v && cur.liveSpec == e.liveSpec {
		cur.liveRV = rv
		rc.entries[k] = cur
	}
	rc.mu.Unlock()
	return e.result, true
}

func (rc *resultCache) put(k cacheKey, v cacheVersion, live *unstructured.Unstructured, r cachedResult) {
	spec := specDigest(live)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.entries) >= rc.sweepAt {
		now := time.Now()
		for key, e := range rc.entries {
			if now.Sub(e.at) > time.Hour {
				delete(rc.entries, key)
			}
		}
		rc.sweepAt = max(minSweepAt, 2*len(rc.entries))
	}
	rc.entries[k] = cacheEntry{version: v, liveRV: live.GetResourceVersion(), liveSpec: spec, result: r, at: time.Now()}
}

// specDigest digests what of a live object a comparison can depend on:
// all of it but its status, its resourceVersion and the managedFields
// entries of its subresources (status), which change together when a
// controller reports. "" when it cannot be encoded.
func specDigest(live *unstructured.Unstructured) string {
	top := make(map[string]any, len(live.Object))
	for f, v := range live.Object {
		if f != "status" {
			top[f] = v
		}
	}
	if md, ok := live.Object["metadata"].(map[string]any); ok {
		trimmed := make(map[string]any, len(md))
		for f, v := range md {
			if f != "resourceVersion" && f != "managedFields" {
				trimmed[f] = v
			}
		}
		var own []any
		for _, e := range live.GetManagedFields() {
			if e.Subresource == "" {
				own = append(own, e)
			}
		}
		trimmed["managedFields"] = own
		top["metadata"] = trimmed
	}
	data, err := json.Marshal(top)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
