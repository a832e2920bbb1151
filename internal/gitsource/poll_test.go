package gitsource

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestPollCycleListsOnce is the promise Ferry makes to Git servers: 50
// Applications on one repository, their timers spread over one poll
// interval, cost one ls-remote per interval, counted at the server; a
// refresh (ForceRefresh) lists again at once; the next interval lists once
// more.
func TestPollCycleListsOnce(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "fifty")
	// A short RefsTTL, so that only MaxAge explains the sharing.
	var mu sync.Mutex
	observed := map[string]int{}
	repos := newRepos(t, Options{RefsTTL: time.Millisecond, Observe: func(typ string, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil && d > 0 {
			observed[typ]++
		}
	}})
	const apps, interval = 50, time.Second

	poll := func(round int) {
		t.Helper()
		var wg sync.WaitGroup
		for i := range apps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Timers jittered over 80% of the interval.
				time.Sleep(time.Duration(i) * interval * 8 / 10 / apps)
				sha, err := repos.Resolve(context.Background(), fx.url, "main", MaxAge(interval))
				if err != nil || sha != fx.a {
					t.Errorf("round %d app %d: %s, %v", round, i, sha, err)
				}
			}()
		}
		wg.Wait()
	}
	poll(1)
	if n := s.Listings(); n != 1 {
		t.Fatalf("the server listed refs %d times for %d apps polling within one interval, want 1", n, apps)
	}
	if _, err := repos.Resolve(context.Background(), fx.url, "main", ForceRefresh()); err != nil {
		t.Fatal(err)
	}
	if n := s.Listings(); n != 2 {
		t.Fatalf("after a refresh: %d listings, want 2", n)
	}
	time.Sleep(interval)
	poll(2)
	if n := s.Listings(); n != 3 {
		t.Fatalf("after a second interval: %d listings, want 3", n)
	}
	if _, err := repos.Resolve(context.Background(), fx.url, "main", MaxAge(0)); err != nil {
		t.Fatal(err)
	}
	if n := s.Listings(); n != 4 {
		t.Fatalf("MaxAge(0) reused a listing: %d listings, want 4", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if observed["ls-remote"] != 4 || observed["fetch"] != 0 {
		t.Fatalf("Observe saw %v, want 4 ls-remotes", observed)
	}
}
