package kube

import (
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

// resultCache keeps the last comparison of each object, so that an
// unchanged object is not dry-run again: the incremental compare.
type resultCache struct {
	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
}

type cacheKey struct {
	app string
	key app.ResourceKey
}

// cacheVersion is everything a comparison depends on.
type cacheVersion struct {
	desired string // task.digest: the desired object and write options
	live    string // the live object's resourceVersion
	uid     string // and UID: a re-created object starts over
	rules   string // diff.Rules.Digest
}

type cachedResult struct {
	sync    app.SyncStatusCode
	message string
}

type cacheEntry struct {
	version cacheVersion
	result  cachedResult
	at      time.Time
}

// sweepAt is the size at which put drops expired entries.
const sweepAt = 20000

func newResultCache() *resultCache { return &resultCache{entries: map[cacheKey]cacheEntry{}} }

// get returns the result stored for k at version v, if it is younger than ttl.
func (rc *resultCache) get(k cacheKey, v cacheVersion, ttl time.Duration) (cachedResult, bool) {
	if ttl <= 0 {
		return cachedResult{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e, ok := rc.entries[k]
	if !ok || e.version != v || time.Since(e.at) > ttl {
		return cachedResult{}, false
	}
	return e.result, true
}

func (rc *resultCache) put(k cacheKey, v cacheVersion, r cachedResult) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.entries) >= sweepAt {
		for key, e := range rc.entries {
			if time.Since(e.at) > time.Hour {
				delete(rc.entries, key)
			}
		}
	}
	rc.entries[k] = cacheEntry{version: v, result: r, at: time.Now()}
}
