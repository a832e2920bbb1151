package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Version changes of the running operation's control, for GetVersion.
const (
	// changeRetryWait: the wait before a retry ends early for a
	// terminate-op or a delete, and continues as new when the history
	// asks for it.
	changeRetryWait = "retry-wait"
)

// terminatedMessage is Argo CD's message of a terminated operation.
const terminatedMessage = "Operation terminated"

func (s *appState) validateTerminateOp(ctx workflow.Context, _ contract.TerminateOpRequest) error {
	if s.running == nil || s.running.terminated != "" {
		return fmt.Errorf("app %q: no operation is in progress: nothing to terminate (ferry app get %s shows the last one)",
			s.app.Metadata.Name, s.app.Metadata.Name)
	}
	return nil
}

// handleTerminateOp terminates the running operation and answers once it
// has ended.
func (s *appState) handleTerminateOp(ctx workflow.Context, _ contract.TerminateOpRequest) (*app.OperationState, error) {
	op := s.running
	if op == nil {
		return s.Status.OperationState, nil
	}
	op.terminate("by ferry app terminate-op")
	if err := workflow.Await(ctx, func() bool { return op.state.FinishedAt != nil }); err != nil {
		return nil, err
	}
	return op.state, nil
}

// terminate stops the operation: what it runs is cancelled, and its
// attempts end (attempts).
func (op *operation) terminate(why string) {
	if op.terminated != "" {
		return
	}
	op.terminated = why
	op.state.Phase, op.state.Message = app.OperationTerminating, "terminating "+why
	if op.cancel != nil {
		op.cancel()
	}
}

// endTerminated records a terminated operation as Argo CD does.
func (op *operation) endTerminated() {
	op.state.Phase, op.state.Message = app.OperationFailed, terminatedMessage+" "+op.terminated
}

// waitToRetry waits out the backoff before the operation's next attempt.
// It reports false when the operation must not retry: it was terminated,
// or the app is being deleted (the delete then goes on: a retrying
// operation never holds it back). From changeRetryWait on, the wait ends
// early for either; before, it was a plain timer.
func (s *appState) waitToRetry(ctx workflow.Context, op *operation, delay time.Duration) (bool, error) {
	timer := workflow.TimerOptions{Summary: retrySummary(op.state.RetryCount)}
	s.onboardWaits(ctx) // onboard_turn.go
	if changeVersion(ctx, changeRetryWait) == workflow.DefaultVersion {
		return true, workflow.NewTimerWithOptions(ctx, delay, timer).Get(ctx, nil)
	}
	_, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: delay, TimerOptions: timer}, func() bool {
		return op.terminated != "" || s.deletion != nil
	})
	if op.terminated != "" {
		return false, nil
	}
	if s.deletion != nil {
		op.terminate("because the app is being deleted")
		return false, nil
	}
	return err == nil, err
}
