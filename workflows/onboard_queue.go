package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// nextRunCtx is ctx for a continue-as-new: every next run is on
// contract.TaskQueue. A new app that Ferry starts runs its first run on the
// onboarding queue (contract.OnboardTaskQueue), which a control worker
// serves with pollers and slots of their own, so that the workflow tasks
// of a mass onboarding queue there, not ahead of those of the apps already
// running (a push to one of them, a user's sync); at its first
// continue-as-new it joins them. A run on the onboarding queue that told
// the gate it is done waits for that signal to be delivered first: a run
// closed before would leave its place at the gate taken. (Only there: a
// run on TaskQueue continues as it did, and replays so.)
func (s *appState) nextRunCtx(ctx workflow.Context) workflow.Context {
	if said := s.onboardTurn.said; said != nil && workflow.GetInfo(ctx).TaskQueueName == contract.OnboardTaskQueue {
		_ = said.Get(ctx, nil) // a gate that is gone has no place to free
	}
	return workflow.WithWorkflowTaskQueue(ctx, contract.TaskQueue)
}
