package workflows

import (
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// syncPlaces records the OnboardPlace of each Sync, and fails the first
// fails of them.
type syncPlaces struct {
	mu     sync.Mutex
	places []string
	fails  int
}

func (p *syncPlaces) seen(in contract.SyncInput) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.places = append(p.places, in.OnboardPlace)
	if len(p.places) <= p.fails {
		return temporal.NewNonRetryableApplicationError("wave 0 is not healthy", contract.ErrSyncFailed, nil)
	}
	return nil
}

func (p *syncPlaces) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.places...)
}

// TestTheFirstSyncHandsItsPlaceToTheRegions: an app in its turn names its
// place at the gate in its first sync's region runs, for them to give it
// back as they wait; a sync after its onboarding names none.
func (s *appSuite) TestTheFirstSyncHandsItsPlaceToTheRegions() {
	_, _, dones := s.onboardGated()
	places := &syncPlaces{}
	s.syncSeen = places.seen
	const id = "default-test-workflow-id"
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(contract.SignalOnboardGo, nil) }, time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.Equal([]string{id, id}, places.get(), "both regions' first syncs hold the place")
		s.Equal(int32(1), dones.Load(), "done, once")
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SyncRequest{})
	}, 2*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.Equal([]string{id, id, "", ""}, places.get(), "a later sync holds none")
		s.Equal(int32(1), dones.Load())
	}, 3*time.Minute)
	s.deleteAt(4*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}

// TestARetryWaitGivesThePlaceBack: a first sync that failed gives its
// place back before it waits to retry; the retry, and the end of the
// first reconcile, say nothing more to the gate.
func (s *appSuite) TestARetryWaitGivesThePlaceBack() {
	_, _, dones := s.onboardGated()
	places := &syncPlaces{fails: 2} // both regions' first attempt
	s.syncSeen = places.seen
	in := testApp(true)
	in.Spec.SyncPolicy.Retry = &app.RetryPolicy{Limit: 2, Backoff: &app.Backoff{Duration: "2m", MaxDuration: "2m"}}
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(contract.SignalOnboardGo, nil) }, time.Minute)
	s.env.RegisterDelayedCallback(func() {
		op := s.query().Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationRunning, op.Phase, "waiting to retry: %s", op.Message)
		s.Equal(int32(1), dones.Load(), "the place given back while it waits")
	}, 2*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.OperationSucceeded, v.Status.OperationState.Phase, v.Status.OperationState.Message)
		s.Equal(int32(1), dones.Load(), "said once")
		const id = "default-test-workflow-id"
		s.Equal([]string{id, id, "", ""}, places.get(), "the retry holds no place")
	}, 5*time.Minute)
	s.deleteAt(6*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}
