package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// signalled is a Temporal client that keeps the refresh signals sent.
type signalled struct {
	client.Client
	mu   sync.Mutex
	sent []contract.RefreshRequest
	to   []string
}

func (s *signalled) SignalWorkflow(_ context.Context, workflowID, _, name string, arg any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == contract.SignalRefresh {
		s.sent = append(s.sent, arg.(contract.RefreshRequest))
		s.to = append(s.to, workflowID)
	}
	return nil
}

func (s *signalled) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// TestDriftDebounce: the changes of one edit reach the app's workflow as
// one refresh signal naming each resource once and who changed them, and
// a change right after waits out the cooldown instead of signalling at
// once; an app the worker has not served is not signalled.
func TestDriftDebounce(t *testing.T) {
	r := &Region{Name: testRegion, DisableLiveCache: true}
	r.watch(context.Background(), "shop")
	sig := &signalled{}
	r.drift.client = sig

	a, b := keyOf("a"), keyOf("b")
	r.onDrift(kube.Drift{App: "shop", Key: a, By: []string{"kubectl-edit"}})
	r.onDrift(kube.Drift{App: "shop", Key: b, By: []string{"kubectl-edit"}})
	r.onDrift(kube.Drift{App: "shop", Key: a, By: []string{"hpa"}})
	r.onDrift(kube.Drift{App: "other", Key: a, By: []string{"kubectl-edit"}})

	require.Eventually(t, func() bool { return sig.count() == 1 }, 2*time.Second, 10*time.Millisecond)
	sig.mu.Lock()
	assert.Equal(t, []string{contract.WorkflowID("shop")}, sig.to)
	assert.Equal(t, &contract.Drift{Region: testRegion, Resources: []app.ResourceKey{a, b}, By: []string{"kubectl-edit", "hpa"}},
		sig.sent[0].Drift)
	sig.mu.Unlock()

	r.onDrift(kube.Drift{App: "shop", Key: b, By: []string{"hpa"}})
	time.Sleep(2 * driftDelay)
	assert.Equal(t, 1, sig.count(), "within the cooldown, the next change waits")
}

// TestHealthDriftIsNotHeldBack: a change of health alone (a Deployment
// turning Available) reaches the app at once, even right after another
// signal, and does not hold back the next edit's signal either.
func TestHealthDriftIsNotHeldBack(t *testing.T) {
	r := &Region{Name: testRegion, DisableLiveCache: true}
	r.watch(context.Background(), "shop")
	sig := &signalled{}
	r.drift.client = sig
	a, b := keyOf("a"), keyOf("b")

	r.onDrift(kube.Drift{App: "shop", Key: a, By: []string{"kubectl-edit"}})
	require.Eventually(t, func() bool { return sig.count() == 1 }, 2*time.Second, 10*time.Millisecond)

	r.onDrift(kube.Drift{App: "shop", Key: b, By: []string{kube.DriftHealth}})
	require.Eventually(t, func() bool { return sig.count() == 2 }, driftCooldown/2, 5*time.Millisecond,
		"a change of health waits out no cooldown")
	sig.mu.Lock()
	assert.Equal(t, &contract.Drift{Region: testRegion, Resources: []app.ResourceKey{b}, By: []string{kube.DriftHealth}}, sig.sent[1].Drift)
	sig.mu.Unlock()

	r.onDrift(kube.Drift{App: "shop", Key: b, By: []string{kube.DriftHealth}})
	require.Eventually(t, func() bool { return sig.count() == 3 }, 2*time.Second, 5*time.Millisecond)
	r.onDrift(kube.Drift{App: "shop", Key: a, By: []string{"hpa"}})
	time.Sleep(2 * driftDelay)
	assert.Equal(t, 3, sig.count(), "an edit still waits out the cooldown of the edit before")
}

// gated is a Temporal client whose refresh signals wait for release; it
// counts the most that were under way at once.
type gated struct {
	signalled
	release        chan struct{}
	inflight, most atomic.Int32
}

func (g *gated) SignalWorkflow(ctx context.Context, workflowID, runID, name string, arg any) error {
	n := g.inflight.Add(1)
	defer g.inflight.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	<-g.release
	return g.signalled.SignalWorkflow(ctx, workflowID, runID, name, arg)
}

// TestAReachabilityChangeIsSignalledAFewAtATime: when the region's API
// server stops answering and then answers again, every app the worker
// served is signalled, at most driftInFlight at a time, and an app whose
// signal had not gone out yet gets one signal saying both.
func TestAReachabilityChangeIsSignalledAFewAtATime(t *testing.T) {
	const apps = 50
	r := &Region{Name: testRegion, DisableLiveCache: true}
	for i := range apps {
		r.watch(context.Background(), fmt.Sprintf("app-%d", i))
	}
	sig := &gated{release: make(chan struct{})}
	r.drift.client = sig

	r.onReachability(kube.Reachability{Err: errors.New("silent")})
	require.Eventually(t, func() bool { return sig.inflight.Load() == driftInFlight }, 5*time.Second, 10*time.Millisecond)
	r.onReachability(kube.Reachability{Reachable: true})
	close(sig.release)
	// The first driftInFlight apps said unreachable alone; they say
	// reachable after the cooldown.
	require.Eventually(t, func() bool { return sig.count() == apps+driftInFlight }, 3*driftCooldown, 20*time.Millisecond)
	time.Sleep(2 * driftDelay)
	assert.Equal(t, apps+driftInFlight, sig.count(), "no app is signalled more")
	assert.LessOrEqual(t, sig.most.Load(), int32(driftInFlight))
	both := 0
	sig.mu.Lock()
	for _, req := range sig.sent {
		if slices.Equal(req.Drift.By, []string{driftUnreachable, driftReachable}) {
			both++
		}
	}
	sig.mu.Unlock()
	assert.Equal(t, apps-driftInFlight, both, "apps signalled once for both changes")
}

// TestAFailedSignalWaitsLongerEachTime: a signal that failed is sent again
// after the cooldown, then after twice as long each time, up to
// driftRetryMax.
func TestAFailedSignalWaitsLongerEachTime(t *testing.T) {
	assert.Equal(t, driftCooldown, retryWait(1))
	assert.Equal(t, 2*driftCooldown, retryWait(2))
	assert.Equal(t, 4*driftCooldown, retryWait(3))
	assert.Equal(t, driftRetryMax, retryWait(10))
	assert.Equal(t, driftRetryMax, retryWait(1000))
}
