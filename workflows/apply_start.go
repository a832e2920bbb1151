package workflows

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/app"
)

// StartNew starts the workflow of an app that has none running, in the
// state the spec update gives a new app (Apply): a belongs to by, and its
// first reconcile is a refresh that the shared listings may answer (the
// refs cache, a chart repository's index), as the update carrying the spec
// the app started with asks (handleSpec): 20 new apps on one repository
// cost one listing per interval, not one each.
// It does not wait for a worker: the server records the start and answers,
// so a fleet of new apps is started as fast as the server takes them,
// instead of one worker round trip each. started is false, and nothing
// changed, when the app's workflow runs already: send it the spec with
// Apply then. The input is not validated by a worker before it is
// recorded, so the caller validates a first as the workers do (with the
// same regions): a workflow whose input the worker refuses fails. An app
// its AppProject does not allow is refused first (CheckAppProject).
func StartNew(ctx context.Context, c client.Client, a *app.Application, by SpecRequest) (started bool, err error) {
	if err := CheckAppProject(ctx, c, a, nil); err != nil {
		return false, err
	}
	summary, details := startSummary(a)
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		StaticSummary: summary, StaticDetails: details,
		ID:                                       WorkflowID(a.Metadata.Name),
		TaskQueue:                                TaskQueue,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, ApplicationWorkflow, newAppInput(a, by))
	if already := (*serviceerror.WorkflowExecutionAlreadyStarted)(nil); errors.As(err, &already) {
		return false, nil
	}
	return err == nil, err
}

// newAppInput is a new app's input in the state that Apply's spec update
// leaves it in: status Unknown, owned by by, a cached refresh requested. It goes
// in Carried, which every worker that runs Application reads (an input
// field of its own would be refused as unknown by a worker older than the
// client); the run starts exactly as one started by Apply continues after
// its first update.
func newAppInput(a *app.Application, by SpecRequest) Input {
	owner := by.owner()
	var st app.Status
	st.Sync.Status, st.Health.Status = app.SyncStatusUnknown, app.HealthUnknown
	return Input{Application: *a, Owner: &owner, Carried: &Carried{Status: st, Refresh: &refreshReq{DriftOnly: true}, Owner: &owner}}
}

// WorkerPolling reports whether a worker polled taskQueue's workflow tasks
// lately (pollerFresh): what Apply's wait for a missing worker looks for,
// once and without waiting. A failed look reports an error.
func WorkerPolling(ctx context.Context, c client.Client, taskQueue string) (bool, error) {
	resp, err := c.DescribeTaskQueue(ctx, taskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return false, err
	}
	return anyPolledWithin(resp.GetPollers(), pollerFresh), nil
}
