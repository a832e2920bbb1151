package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// changeSyncWindows gates the window checks: runs recorded before them
// check none, so their histories replay unchanged.
const changeSyncWindows = "sync-windows"

// windowOpenMargin is waited past a window's opening, so that the
// reconcile the timer starts finds it open.
const windowOpenMargin = time.Second

// checkWindows asks the app's project whether a sync may run now. An app
// of the default project asks too (changeDefaultProject): the built-in one
// has no windows, an applied default object may.
func (s *appState) checkWindows(ctx workflow.Context, manual bool) (app.WindowDecision, error) {
	project := s.app.ProjectOf()
	switch {
	case s.skipsDefaultProject(ctx):
		return app.WindowDecision{Allowed: true}, nil
	case project != app.DefaultProject &&
		changeVersion(ctx, changeSyncWindows) == workflow.DefaultVersion:
		return app.WindowDecision{Allowed: true}, nil
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: resolveTimeout,
		RetryPolicy:         activityRetry(3),
		Summary:             "sync windows of project " + project,
	})
	var out contract.SyncWindowsResult
	err := workflow.ExecuteLocalActivity(lctx, contract.ActivitySyncWindows, contract.SyncWindowsInput{
		Project: project, Subject: s.app.WindowSubject(s.cfg.Regions), Now: workflow.Now(ctx), Manual: manual,
	}).Get(ctx, &out)
	if err != nil {
		return app.WindowDecision{}, fmt.Errorf("app %q: read the sync windows of project %q: %s", s.app.Metadata.Name, project,
			rootMessage(ctx, err))
	}
	return out.WindowDecision, nil
}

// windowsHoldAutoSync reports whether the project's windows hold back an
// automated sync of target now; the status then says which and until when.
func (s *appState) windowsHoldAutoSync(ctx workflow.Context, target contract.Target) bool {
	d, err := s.checkWindows(ctx, false)
	switch {
	case err != nil:
		// Not knowing the windows, the app does not sync; it asks again at
		// its next poll.
		s.Status.SyncWindow = &app.SyncWindowStatus{Revision: target.Commit(), Message: err.Error()}
		return true
	case !d.Allowed:
		sw := &app.SyncWindowStatus{Revision: target.Commit(), Blocking: d.Blocking, Message: d.Message}
		if !d.OpensAt.IsZero() {
			sw.OpensAt = &d.OpensAt
		}
		s.Status.SyncWindow = sw
		return true
	}
	s.Status.SyncWindow = nil
	return false
}

// refuseManualSync is the error of a manual sync that a window blocks.
func (s *appState) refuseManualSync(ctx workflow.Context) error {
	d, err := s.checkWindows(ctx, true)
	switch {
	case err != nil:
		return err
	case !d.Allowed:
		return errors.New(d.Message)
	}
	return nil
}

// windowDelay shortens the wait for the next poll to the opening of the
// windows that hold an automated sync back: a durable timer, no polling.
func (s *appState) windowDelay(now time.Time, delay time.Duration, summary string) (time.Duration, string) {
	sw := s.Status.SyncWindow
	if sw == nil || sw.OpensAt == nil {
		return delay, summary
	}
	if until := sw.OpensAt.Sub(now) + windowOpenMargin; until < delay {
		return max(until, windowOpenMargin), timerSyncWindow
	}
	return delay, summary
}
