package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// healthWatch follows the Deployments of one namespace of a region, as
// `kubectl rollout status` does, and notes when each last turned Healthy
// by the rules Ferry and Argo CD judge them with: the health lag of an app
// is the time from the last of them turning Healthy to the app showing
// Healthy.
type healthWatch struct {
	cancel context.CancelFunc

	mu      sync.Mutex
	healthy map[string]bool
	turned  map[string]time.Time // when each last turned Healthy
}

// watchHealth starts watching the Deployments of namespace ns in region.
func (e *Env) watchHealth(ctx context.Context, region, ns string) (*healthWatch, error) {
	w := &healthWatch{healthy: map[string]bool{}, turned: map[string]time.Time{}}
	see := func(u *unstructured.Unstructured) {
		now := time.Now()
		h, _ := health.Get(u)
		w.mu.Lock()
		defer w.mu.Unlock()
		was := w.healthy[u.GetName()]
		w.healthy[u.GetName()] = h == app.HealthHealthy
		if h == app.HealthHealthy && !was {
			w.turned[u.GetName()] = now
		}
	}
	var err error
	w.cancel, err = e.inform(ctx, region, deployments, ns, see)
	return w, err
}

// lastHealthy is when the last of want Deployments turned Healthy, once
// all of them are and did after since; it waits (up to ctx) for the watch
// to see them all, as it may see the last change a little after the app or
// kubectl did.
func (w *healthWatch) lastHealthy(ctx context.Context, want int, since time.Time) (time.Time, error) {
	for {
		w.mu.Lock()
		var last time.Time
		n := 0
		for name, ok := range w.healthy {
			if ok && w.turned[name].After(since) {
				n++
				last = later(last, w.turned[name])
			}
		}
		w.mu.Unlock()
		if n >= want {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%d of %d deployments seen Healthy: %w", n, want, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (w *healthWatch) stop() { w.cancel() }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// healthLag is the time from the last of want Deployments of each watch
// turning Healthy (after since) to at, when a watcher (the app's status,
// kubectl wait) showed it.
func healthLag(ctx context.Context, watches []*healthWatch, want int, since, at time.Time) (float64, error) {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var last time.Time
	for _, hw := range watches {
		l, err := hw.lastHealthy(wctx, want, since)
		if err != nil {
			return 0, err
		}
		last = later(last, l)
	}
	return at.Sub(last).Seconds(), nil
}
