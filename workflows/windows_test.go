package workflows

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// windowsStandIn answers ActivitySyncWindows from a real project, as the
// control worker does, and counts the questions.
func (s *appSuite) windowsStandIn(window app.SyncWindow, asked *atomic.Int32) {
	p := app.AppProject{Metadata: app.ObjectMeta{Name: "team-a"}, Spec: app.ProjectSpec{SyncWindows: []app.SyncWindow{window}}}
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.SyncWindowsInput) (contract.SyncWindowsResult, error) {
		asked.Add(1)
		s.Equal("team-a", in.Project)
		return contract.SyncWindowsResult{WindowDecision: p.SyncAllowed(in.Subject, in.Now, in.Manual)}, nil
	}, activity.RegisterOptions{Name: contract.ActivitySyncWindows})
	s.env.RegisterActivityWithOptions(func(context.Context, contract.ProjectPermissionsInput) (contract.ProjectPermissionsResult, error) {
		return contract.ProjectPermissionsResult{}, nil // the project permits the app
	}, activity.RegisterOptions{Name: contract.ActivityProjectPermissions})
}

func windowApp(automated bool) Input {
	in := testApp(automated)
	in.Spec.Project = "team-a"
	in.Spec.PollInterval = "1h" // the sync must not wait for a poll
	return in
}

// A deny window of two minutes, active when the app starts: the automated
// sync waits for it to close on a timer, the status naming the window, and
// runs as it closes, long before the next poll.
func (s *appSuite) TestDenyWindowHoldsAutoSyncUntilItCloses() {
	start := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	s.env.SetStartTime(start)
	var asked atomic.Int32
	s.windowsStandIn(app.SyncWindow{Kind: app.WindowDeny, Schedule: "0 12 * * *", Duration: "2m", Applications: []string{"guest*"}}, &asked)
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "1111111111111111"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	var syncs atomic.Int32
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
		syncs.Add(1)
		return cluster.sync(ctx, in)
	})
	opens := time.Date(2026, 12, 1, 12, 2, 0, 0, time.UTC)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(int32(0), syncs.Load(), "no sync inside the deny window")
		s.Equal(app.SyncStatusOutOfSync, v.Status.Sync.Status)
		sw := v.Status.SyncWindow
		s.Require().NotNil(sw, "the status says what holds the sync")
		s.Require().Len(sw.Blocking, 1)
		s.Equal(app.WindowRef{Project: "team-a", Index: 0, Kind: "deny", Schedule: "0 12 * * *", Duration: "2m"}, sw.Blocking[0])
		s.Require().NotNil(sw.OpensAt)
		s.True(opens.Equal(*sw.OpensAt), "opens at %s", sw.OpensAt)
		s.Contains(sw.Message, "team-a/syncWindows[0]")
		s.Equal("1111111111111111", sw.Revision)
	}, time.Minute)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(int32(2), syncs.Load(), "one sync per region once the window closed")
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Nil(v.Status.SyncWindow)
		s.Require().NotNil(v.Status.OperationState)
		s.False(v.Status.OperationState.StartedAt.Before(opens), "synced at %s, before the window closed", v.Status.OperationState.StartedAt)
		s.Equal(int32(2), asked.Load(), "asked once at the start, once when the window closed: no polling")
	}, 3*time.Minute)
	s.deleteAt(4*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, windowApp(true))
	s.NoError(s.env.GetWorkflowError())
}

// A manual sync inside a deny window is refused, naming the window, unless
// the window has manualSync: true.
func (s *appSuite) TestDenyWindowRefusesManualSyncUnlessManualSync() {
	for _, manualSync := range []bool{false, true} {
		s.Run("manualSync="+map[bool]string{false: "false", true: "true"}[manualSync], func() {
			s.SetupTest()
			s.env.SetStartTime(time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC))
			var asked atomic.Int32
			s.windowsStandIn(app.SyncWindow{Kind: app.WindowDeny, Schedule: "0 12 * * *", Duration: "2m",
				Clusters: []string{"eu-*"}, ManualSync: manualSync}, &asked)
			s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "1111111111111111"}, nil)
			s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
			cluster := &fakeCluster{synced: map[string]string{}}
			s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
			var syncs atomic.Int32
			s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
				syncs.Add(1)
				return cluster.sync(ctx, in)
			}).Maybe()
			var syncErr error
			completed := false
			s.env.RegisterDelayedCallback(func() {
				s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { s.Fail("sync rejected", err) },
					OnAccept:   func() {},
					OnComplete: func(_ any, err error) { completed, syncErr = true, err },
				}, contract.SyncRequest{})
			}, 10*time.Second)
			s.env.RegisterDelayedCallback(func() {
				s.True(completed)
				if manualSync {
					s.NoError(syncErr)
					s.Equal(int32(2), syncs.Load())
					return
				}
				s.Require().Error(syncErr)
				s.Contains(syncErr.Error(), `app "guestbook": sync blocked by deny sync window team-a/syncWindows[0] (deny "0 12 * * *" for 2m, UTC)`)
				s.Contains(syncErr.Error(), "syncs may run from 2026-12-01T12:02:00Z")
				s.Contains(syncErr.Error(), "manualSync: true")
				s.Equal(int32(0), syncs.Load(), "nothing synced")
			}, 30*time.Second)
			s.deleteAt(40*time.Second, false)
			s.env.ExecuteWorkflow(contract.ApplicationWorkflow, windowApp(false))
			s.NoError(s.env.GetWorkflowError())
			s.Equal(int32(1), asked.Load(), "a manual app asks only when it syncs")
		})
	}
}
