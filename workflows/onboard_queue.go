package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// A new app that Ferry starts runs its first run on the onboarding queue
// (contract.OnboardTaskQueue), which a control worker serves with pollers
// and slots of their own: the workflow tasks of a mass onboarding queue
// there, not ahead of those of the apps already running (a push to one of
// them, a user's sync). Once the app has taken its first sync or compare
// (it is no longer new), the run continues as new on contract.TaskQueue,
// where every later run of every app is. A run on TaskQueue never takes
// this path; a run on the onboarding queue begun before the change
// (changeLeaveOnboardQueue) stays there until its first continue-as-new,
// as it did.

// changeLeaveOnboardQueue: a run on the onboarding queue continues as new
// on TaskQueue as soon as its app is onboarded.
const changeLeaveOnboardQueue = "leave-onboard-queue"

// leavesOnboardQueue: this run is on the onboarding queue and its app is
// onboarded; the loop continues it as new on TaskQueue once it is idle.
func (s *appState) leavesOnboardQueue(ctx workflow.Context) bool {
	return workflow.GetInfo(ctx).TaskQueueName == contract.OnboardTaskQueue && !s.isNew() &&
		changeVersion(ctx, changeLeaveOnboardQueue) != workflow.DefaultVersion
}

// nextRunCtx is ctx for a continue-as-new: every next run is on
// TaskQueue, once the gate was told (awaitGateTold).
func (s *appState) nextRunCtx(ctx workflow.Context) workflow.Context {
	s.awaitGateTold(ctx)
	return workflow.WithWorkflowTaskQueue(ctx, contract.TaskQueue)
}

// awaitGateTold: a run on the onboarding queue that told the gate it is
// done waits for that signal to be delivered: a run closed before would
// leave its place at the gate taken. (Only there: a run on TaskQueue
// continues as it did, and replays so.)
func (s *appState) awaitGateTold(ctx workflow.Context) {
	if said := s.onboardTurn.said; said != nil && workflow.GetInfo(ctx).TaskQueueName == contract.OnboardTaskQueue {
		_ = said.Get(ctx, nil) // a gate that is gone has no place to free
	}
}
