package webhook

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Index maps normalised repo URLs to the apps that track them (an app of
// several repositories, one per source, is listed once per repository). It is built
// from a full listing of the running apps. A listing costs one visibility
// query per page of apps, seconds on a busy cluster of thousands, so a push
// never waits for one where the index already knows apps of its repository:
// they are signalled at once, and when the listing is older than MaxAge the
// apps a new listing adds are signalled after it (Added). A miss lists again
// first when the listing is older than MinAge (a new app on a new repo is
// found at once).
type Index struct {
	list   func(context.Context) ([]App, error)
	maxAge time.Duration
	minAge time.Duration
	now    func() time.Time

	mu    sync.Mutex
	byKey map[string][]App
	built time.Time
	group singleflight.Group
}

// NewIndex returns an index over the apps that list returns.
func NewIndex(list func(context.Context) ([]App, error), maxAge, minAge time.Duration) *Index {
	return &Index{list: list, maxAge: maxAge, minAge: minAge, now: time.Now}
}

// Match is an app that tracks a pushed repository.
type Match struct {
	App string
	// RepoURLs are the app's repo URLs that name the pushed repository, as
	// the app writes them (one per form, when its sources write it several
	// ways), so that the app can tell which of its sources moved.
	RepoURLs []string
}

// Lookup returns the apps that track any of the repo keys (see
// Push.RepoKeys), sorted by name; stale: they come from a listing older
// than MaxAge, and Added tells which apps a new one adds.
func (x *Index) Lookup(ctx context.Context, keys []string) (matches []Match, stale bool, err error) {
	byKey, built := x.snapshot()
	age := x.now().Sub(built)
	if byKey != nil {
		matches = match(byKey, keys)
		if len(matches) > 0 || age <= x.minAge {
			return matches, age > x.maxAge, nil
		}
	}
	if byKey, err = x.rebuild(ctx); err != nil {
		return nil, false, err
	}
	return match(byKey, keys), false, nil
}

// Added returns the apps that track any of the repo keys and are not among
// known (what a stale Lookup returned), from a listing younger than MaxAge:
// it lists the apps again unless another caller did meanwhile.
func (x *Index) Added(ctx context.Context, keys []string, known []Match) ([]Match, error) {
	byKey, built := x.snapshot()
	if byKey == nil || x.now().Sub(built) > x.maxAge {
		var err error
		if byKey, err = x.rebuild(ctx); err != nil {
			return nil, err
		}
	}
	return slices.DeleteFunc(match(byKey, keys), func(m Match) bool {
		return slices.ContainsFunc(known, func(k Match) bool { return k.App == m.App })
	}), nil
}

// Repos returns every tracked repository's apps, by repo key, from a
// listing at most MaxAge old. The map is shared: read it only.
func (x *Index) Repos(ctx context.Context) (map[string][]App, error) {
	byKey, built := x.snapshot()
	if byKey == nil || x.now().Sub(built) > x.maxAge {
		return x.rebuild(ctx)
	}
	return byKey, nil
}

// Invalidate makes the next Lookup list the apps again.
func (x *Index) Invalidate() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.built = time.Time{}
}

func (x *Index) snapshot() (map[string][]App, time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.byKey, x.built
}

// rebuild lists the apps once for every caller waiting at the same time.
func (x *Index) rebuild(ctx context.Context) (map[string][]App, error) {
	ch := x.group.DoChan("list", func() (any, error) {
		started := x.now()
		// Detached from the first caller's context: others share the result.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		apps, err := x.list(lctx)
		if err != nil {
			return nil, err
		}
		byKey := make(map[string][]App, len(apps))
		for _, a := range apps {
			if k := repoKey(a.RepoURL); k != "" && !slices.Contains(byKey[k], a) {
				byKey[k] = append(byKey[k], a)
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
		return res.Val.(map[string][]App), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func match(byKey map[string][]App, keys []string) []Match {
	var out []Match
	for _, k := range keys {
		for _, a := range byKey[k] {
			i := slices.IndexFunc(out, func(m Match) bool { return m.App == a.Name })
			if i < 0 {
				out, i = append(out, Match{App: a.Name}), len(out)
			}
			if !slices.Contains(out[i].RepoURLs, a.RepoURL) {
				out[i].RepoURLs = append(out[i].RepoURLs, a.RepoURL)
			}
		}
	}
	slices.SortFunc(out, func(a, b Match) int { return strings.Compare(a.App, b.App) })
	return out
}
