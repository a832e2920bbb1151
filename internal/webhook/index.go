package webhook

import (
	"context"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Index maps normalised repo URLs to the apps that track them. It is built
// from a full listing of the running apps and rebuilt when older than
// MaxAge, and on a miss when older than MinAge (a new app on a new repo is
// found at once; a new app on a repo that other apps already track, within
// MaxAge). A listing costs one visibility query per page of apps.
type Index struct {
	list   func(context.Context) ([]App, error)
	maxAge time.Duration
	minAge time.Duration
	now    func() time.Time

	mu    sync.Mutex
	byKey map[string][]string
	built time.Time
	group singleflight.Group
}

// NewIndex returns an index over the apps that list returns.
func NewIndex(list func(context.Context) ([]App, error), maxAge, minAge time.Duration) *Index {
	return &Index{list: list, maxAge: maxAge, minAge: minAge, now: time.Now}
}

// Lookup returns the names of the apps that track any of the repo keys
// (see Push.RepoKeys), sorted.
func (x *Index) Lookup(ctx context.Context, keys []string) ([]string, error) {
	byKey, built := x.snapshot()
	age := x.now().Sub(built)
	if byKey == nil || age > x.maxAge || (age > x.minAge && len(match(byKey, keys)) == 0) {
		var err error
		if byKey, err = x.rebuild(ctx); err != nil {
			return nil, err
		}
	}
	return match(byKey, keys), nil
}

// Invalidate makes the next Lookup list the apps again.
func (x *Index) Invalidate() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.built = time.Time{}
}

func (x *Index) snapshot() (map[string][]string, time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.byKey, x.built
}

// rebuild lists the apps once for every caller waiting at the same time.
func (x *Index) rebuild(ctx context.Context) (map[string][]string, error) {
	ch := x.group.DoChan("list", func() (any, error) {
		started := x.now()
		// Detached from the first caller's context: others share the result.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		apps, err := x.list(lctx)
		if err != nil {
			return nil, err
		}
		byKey := make(map[string][]string, len(apps))
		for _, a := range apps {
			if k := repoKey(a.RepoURL); k != "" {
				byKey[k] = append(byKey[k], a.Name)
			}
		}
		x.mu.Lock()
		x.byKey, x.built = byKey, started
		x.mu.Unlock()
		return byKey, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(map[string][]string), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func match(byKey map[string][]string, keys []string) []string {
	var names []string
	for _, k := range keys {
		for _, n := range byKey[k] {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names
}
