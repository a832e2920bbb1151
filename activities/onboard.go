package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
)

// Onboarding asks the onboarding gate for new apps' turns.
type Onboarding struct {
	Client client.Client
}

// Register adds the onboarding activity to a worker of the control queue.
func (o *Onboarding) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(o.Want, activity.RegisterOptions{Name: contract.ActivityOnboardWant})
}

// Want queues the app at the gate, starting the gate if it does not run.
func (o *Onboarding) Want(ctx context.Context, req contract.OnboardRequest) error {
	// The gate's tasks go out first: the apps queued behind a backlog of
	// the control queue wait for them.
	opts := client.StartWorkflowOptions{ID: contract.OnboardGateID, TaskQueue: contract.TaskQueue,
		Priority: temporal.Priority{PriorityKey: 1}}
	_, err := o.Client.SignalWithStartWorkflow(ctx, contract.OnboardGateID, contract.SignalOnboardWant, req, opts,
		contract.OnboardGateWorkflow, contract.OnboardGateState{Capacity: req.Capacity})
	if err != nil {
		return fmt.Errorf("onboarding gate: queue app %s: %w", req.App, err)
	}
	if req.Recheck {
		return o.progress(ctx)
	}
	return nil
}

// gateStuckAttempts: a gate whose workflow task failed or timed out this
// many times in a row lets no app in.
const gateStuckAttempts = 3

// progress fails when the gate makes no progress: its workflow task keeps
// failing (a panic, a nondeterministic change). Temporal's history service
// answers this, not the gate's worker.
func (o *Onboarding) progress(ctx context.Context) error {
	d, err := o.Client.DescribeWorkflowExecution(ctx, contract.OnboardGateID, "")
	if err != nil {
		return fmt.Errorf("onboarding gate: describe: %w", err)
	}
	if a := d.GetPendingWorkflowTask().GetAttempt(); a >= gateStuckAttempts {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("onboarding gate: its workflow task is on attempt %d: it lets no app in", a), "GateStuck", nil)
	}
	return nil
}
