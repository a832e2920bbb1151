package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// AppTaskTimeout is the workflow task timeout an app's workflow is started
// with (ferryclient), and each run after a continue-as-new keeps: a new
// app's first render runs inside a workflow task (renderLocally). A render
// longer than 0.8 of the timeout makes the SDK heartbeat the task, and on a
// loaded server a heartbeat that does not arrive in the last fifth loses the
// task and the render is done again. Temporal's default of 10 s left 2 s for
// that; renders of 12-15 s were common while 5,000 apps onboarded on two
// cores. The cost: a workflow task lost with its worker waits this long to
// be handed to another.
const AppTaskTimeout = 30 * time.Second

// versionOnboard: the runs before it rendered with an activity and
// compared before the first sync.
const versionOnboard = "onboard-fewer-tasks"

// onboardState is decided once per run, at the first reconcile of a new
// app.
type onboardState struct {
	// firstRun: the run began as a new app's, not continued as new from
	// one that rendered or synced.
	firstRun    bool
	decided, on bool
}

// isNew: nothing of the app was ever compared, synced or deployed.
func (s *appState) isNew() bool {
	return s.onboard.firstRun && s.Rendered == nil && s.Status.OperationState == nil &&
		len(s.Status.Resources) == 0 && len(s.Status.History) == 0 && s.AutoSync == nil
}

// onboarding tells whether this reconcile is a new app's first, on the
// version that takes the shortcuts above.
func (s *appState) onboarding(ctx workflow.Context) bool {
	o := &s.onboard
	if !o.decided && s.isNew() {
		o.decided = true
		o.on = changeVersion(ctx, versionOnboard) == 1
	}
	o.decided = true
	return o.on && s.isNew()
}

// renderLocally: the render of target's revision runs in this workflow
// task (a new app's first).
func (s *appState) renderLocally(ctx workflow.Context) bool {
	return s.onboarding(ctx)
}

// foldsFirstCompare tells whether a new app's first sync stands for its
// first compare (above). The render is done: s.rendered is this target's,
// but the app has still neither compared nor synced.
func (s *appState) foldsFirstCompare(ctx workflow.Context) bool {
	o := &s.onboard
	if !o.on || s.Status.OperationState != nil || len(s.Status.Resources) != 0 || s.AutoSync != nil {
		return false
	}
	r := s.Rendered
	dests := s.destinations()
	if !s.app.AutomatedSync() || r == nil || r.Count == 0 || len(r.Children) > 0 || s.hasChildren() ||
		len(r.Hooks) > 0 || r.Source != nil || s.app.IsMultiSource() || s.rollsOut() || len(dests) != 1 {
		return false
	}
	// The resolve asked who serves the region's queue (idle.go): without a
	// worker there, the compare's shorter wait tells the user sooner.
	return s.polls.workers[dests[0].Region] != ""
}
