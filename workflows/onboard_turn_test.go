package workflows

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// onboardGated sets up a new automated app on a worker bounding onboarding:
// its asks of the gate, its resolves and its done signals are counted.
// A recheck (an ask after a wait that ended without a turn) fails while
// s.gateStuck.
func (s *appSuite) onboardGated() (wants, resolves, dones *atomic.Int32) {
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1"), OnboardConcurrency: 4})
	wants, resolves, dones = &atomic.Int32{}, &atomic.Int32{}, &atomic.Int32{}
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.OnboardRequest) error {
		recheck := in.Recheck
		in.Recheck = false
		s.Equal(contract.OnboardRequest{App: "default-test-workflow-id", Capacity: 4}, in)
		wants.Add(1)
		if recheck && s.gateStuck {
			return temporal.NewNonRetryableApplicationError("its workflow task is on attempt 3", "GateStuck", nil)
		}
		return nil
	}, activity.RegisterOptions{Name: contract.ActivityOnboardWant})
	// The first render of a new app is a local activity; its resolve (a
	// local activity too) runs only in the app's turn.
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			resolves.Add(1)
			return contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil
		}).Maybe()
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil).Maybe()
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare).Maybe()
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			if s.syncSeen != nil {
				if err := s.syncSeen(in); err != nil {
					return contract.SyncResult{}, err
				}
			}
			return cluster.sync(ctx, in)
		}).Maybe()
	s.env.OnSignalExternalWorkflow(mock.Anything, contract.OnboardGateID, "", contract.SignalOnboardDone, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			s.Equal(contract.OnboardRequest{App: "default-test-workflow-id"}, arg)
			dones.Add(1)
			if s.gateTold != nil {
				s.gateTold()
			}
			return nil
		}).Maybe()
	return wants, resolves, dones
}

// TestANewAppWaitsForItsTurnToOnboard: a new app asks the gate once and
// resolves, renders, compares and syncs nothing until its turn comes; then it
// onboards and says it is done, once.
func (s *appSuite) TestANewAppWaitsForItsTurnToOnboard() {
	wants, resolves, dones := s.onboardGated()
	s.env.RegisterDelayedCallback(func() {
		s.Equal(int32(1), wants.Load(), "asked once")
		s.Zero(resolves.Load(), "nothing done before its turn")
		v := s.query()
		s.Equal(app.SyncStatusUnknown, v.Status.Sync.Status)
		s.Require().Len(v.Status.Conditions, 1, "why it is Unknown")
		s.Equal(conditionOnboardingQueued, v.Status.Conditions[0].Type)
		s.Contains(v.Status.Conditions[0].Message, "waiting for its turn to onboard: new apps take their first sync 4 at a time")
		s.env.SignalWorkflow(contract.SignalOnboardGo, nil)
	}, 10*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status, "onboarded in its turn")
		s.Empty(v.Status.Conditions, "no longer queued")
		s.Equal(int32(1), dones.Load(), "done, once")
		s.Equal(int32(1), wants.Load())
	}, 10*time.Minute+time.Minute)
	s.deleteAt(12*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}

// TestAUsersSyncDoesNotWaitForTheTurn: a sync a user asks for while the
// app waits goes first; the app leaves the queue and does not wait again.
func (s *appSuite) TestAUsersSyncDoesNotWaitForTheTurn() {
	wants, resolves, dones := s.onboardGated()
	s.env.RegisterDelayedCallback(func() {
		s.Zero(resolves.Load())
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SyncRequest{})
	}, 5*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(app.SyncStatusSynced, s.query().Status.Sync.Status, "synced without its turn")
		s.Equal(int32(1), dones.Load(), "left the queue")
		s.Equal(int32(1), wants.Load(), "asked once")
	}, 6*time.Minute)
	s.deleteAt(7*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}

// TestAGateThatDoesNotAnswerSlowsOnboardingDown: a turn that never comes
// ends after the app's wait (onboardWait, spread), and when the gate makes
// no progress the app onboards then.
func (s *appSuite) TestAGateThatDoesNotAnswerSlowsOnboardingDown() {
	_, resolves, dones := s.onboardGated()
	s.gateStuck = true
	wait := spreadWait(testApp(true).Metadata.Name, onboardWait)
	s.env.RegisterDelayedCallback(func() { s.Zero(resolves.Load()) }, wait-time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(app.SyncStatusSynced, s.query().Status.Sync.Status)
		s.Equal(int32(1), dones.Load(), "left the queue")
	}, wait+time.Minute)
	s.deleteAt(wait+2*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}

// TestAQueueLongerThanTheWaitKeepsTheAppInIt: a wait that ends while the
// gate makes progress (a long queue, not a broken gate) asks again and
// waits once more; the app onboards in its turn.
func (s *appSuite) TestAQueueLongerThanTheWaitKeepsTheAppInIt() {
	wants, resolves, dones := s.onboardGated()
	turn := spreadWait(testApp(true).Metadata.Name, onboardWait) + 15*time.Minute
	s.env.RegisterDelayedCallback(func() {
		s.Zero(resolves.Load(), "still waiting for its turn")
		s.Equal(int32(2), wants.Load(), "asked, then asked again when the wait ended")
		s.Zero(dones.Load(), "kept its place")
		s.Equal(conditionOnboardingQueued, s.query().Status.Conditions[0].Type)
		s.env.SignalWorkflow(contract.SignalOnboardGo, nil)
	}, turn)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(app.SyncStatusSynced, s.query().Status.Sync.Status, "onboarded in its turn")
		s.Equal(int32(1), dones.Load(), "done, once")
	}, turn+time.Minute)
	s.deleteAt(turn+2*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}

// TestADeleteDoesNotWaitForTheTurn: a waiting app deleted goes at once,
// having resolved nothing. (Its place at the gate is freed by its done
// signal, or, should that not arrive, when the gate's go signal finds the
// app gone: TestOnboardGateFreesLostPlaces.)
func (s *appSuite) TestADeleteDoesNotWaitForTheTurn() {
	wants, resolves, _ := s.onboardGated()
	s.deleteAt(5*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
	s.True(s.env.IsWorkflowCompleted(), "deleted without its turn")
	s.Zero(resolves.Load(), "nothing resolved, rendered or synced")
	s.Equal(int32(1), wants.Load())
}

// TestNewAppsEndTheirWaitsApart: the waits of a thousand apps applied
// together end over a quarter of an hour rather than in one minute, each
// between onboardWait and half as long again.
func TestNewAppsEndTheirWaitsApart(t *testing.T) {
	perMinute := map[time.Duration]int{}
	for i := range 1000 {
		w := spreadWait(fmt.Sprintf("app-%d", i), onboardWait)
		if w < onboardWait || w > onboardWait*3/2 {
			t.Fatalf("app-%d waits %s, want %s to %s", i, w, onboardWait, onboardWait*3/2)
		}
		perMinute[w.Truncate(time.Minute)]++
	}
	for minute, n := range perMinute {
		if n > 100 {
			t.Errorf("%d of 1,000 apps end their wait in minute %s", n, minute)
		}
	}
	if len(perMinute) < 14 {
		t.Errorf("the waits end in %d distinct minutes, want the 15 of the spread", len(perMinute))
	}
}
