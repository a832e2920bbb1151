package ferryclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Apply creates the app's workflow, or sends a running one the new spec:
// one update-with-start, as `ferry app apply` and an app of apps do. An app
// its AppProject does not allow is refused first (CheckAppProject); the
// update's validator refuses a bad spec before anything changes. The update
// is answered by a control worker, which polls ferry and ferry-onboard (a
// new app's first run): when none polls one of them, Apply returns a
// *NoWorkerError naming it instead of waiting for one without end. by says
// who applies: an app owned by someone else is refused, unchanged, with an
// error IsOwnerRefusal knows; a new app belongs to by.
func Apply(ctx context.Context, c client.Client, a *app.Application, by contract.SpecRequest) (contract.View, error) {
	if err := CheckAppProject(ctx, c, a, nil); err != nil {
		return contract.View{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go cancelWithoutWorkers(ctx, c, cancel, contract.TaskQueue, contract.OnboardTaskQueue)
	opts := startOptions(a)
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	start := c.NewWithStartWorkflowOperation(opts, contract.ApplicationWorkflow, workflows.Input{Application: *a, Owner: new(by.Owner())})
	handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: contract.UpdateSpec, Args: []any{a, by}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var v contract.View
	if err == nil {
		err = handle.Get(ctx, &v)
	}
	if noWorker := (*contract.NoWorkerError)(nil); err != nil && errors.As(context.Cause(ctx), &noWorker) {
		return v, noWorker
	}
	return v, err
}

const (
	// workerCheckAfter is how long a request waits before it looks for the
	// workers of its task queue: with one polling, it is answered sooner.
	workerCheckAfter = 3 * time.Second
	// workerCheckEvery is how often it looks again while it waits.
	workerCheckEvery = 5 * time.Second
	// pollerFresh is how recent a worker's last poll must be for it to
	// count: a poll lasts up to a minute, and the server lists a poller
	// for 5 minutes after its last one, also when its process is gone.
	pollerFresh = 90 * time.Second
)

// cancelWithoutWorkers cancels ctx with a *NoWorkerError once two looks
// in a row, after workerCheckAfter and then every workerCheckEvery until
// ctx ends, find no worker that polled one of queues in the last
// pollerFresh (the first such queue is named): a worker started together
// with the request (make run, a test) may take its first poll after the
// first look. A failed look is no verdict: the request itself reports a
// server that is down.
func cancelWithoutWorkers(ctx context.Context, c client.Client, cancel context.CancelCauseFunc, queues ...string) {
	timer := time.NewTimer(workerCheckAfter)
	defer timer.Stop()
	missed := map[string]int{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for _, q := range queues {
			resp, err := c.DescribeTaskQueue(ctx, q, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
			switch {
			case err != nil:
			case anyPolledWithin(resp.GetPollers(), pollerFresh):
				missed[q] = 0
			default:
				if missed[q]++; missed[q] == 2 {
					cancel(&contract.NoWorkerError{TaskQueue: q})
					return
				}
			}
		}
		timer.Reset(workerCheckEvery)
	}
}

// anyPolledWithin: a poller of the queue was seen in the last age (this
// is the CLI's clock, not a workflow's).
func anyPolledWithin(pollers []*taskqueuepb.PollerInfo, age time.Duration) bool {
	for _, p := range pollers {
		if time.Since(p.GetLastAccessTime().AsTime()) < age {
			return true
		}
	}
	return false
}

// Delete deletes an app through its delete update: with its resources when
// req.Cascade says so, or, when it is nil, when the app carries Argo CD's
// resources finalizer. An app of apps (req.Parent) may delete only its own.
// A deletion that waits for its confirmation (Delete=confirm) is no error:
// it goes on once confirmed, as an Argo CD Application waits with its
// finalizer; DeleteApp tells it.
func Delete(ctx context.Context, c client.Client, name string, req contract.DeleteRequest) error {
	_, err := DeleteApp(ctx, c, name, req)
	return err
}

// DeleteApp is Delete, with what the deletion waits for when it does.
func DeleteApp(ctx context.Context, c client.Client, name string, req contract.DeleteRequest) (contract.DeleteOutcome, error) {
	var out contract.DeleteOutcome
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID(name), UpdateName: contract.UpdateDelete,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, &out)
	}
	return out, err
}

// Confirm confirms what the app waits for (UpdateConfirm).
func Confirm(ctx context.Context, c client.Client, name string) (contract.ConfirmResult, error) {
	var out contract.ConfirmResult
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID(name), UpdateName: contract.UpdateConfirm,
		Args: []any{contract.ConfirmRequest{}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, &out)
	}
	return out, err
}

// Sync sends the app a sync request (UpdateSync): ferry app sync and
// rollback, an Application object's operation, an ApplicationSet's
// progressive sync. req.InitiatedBy is who asks (the user a server
// authenticated, or the caller's client identity); the workflow keeps it
// as the operation's initiatedBy, and cannot learn it otherwise. stage is
// what to wait for: accepted (the operation has begun; the handle's Get
// answers its state once it ends, or once it continues as new between
// retries, still running) or completed.
func Sync(ctx context.Context, c client.Client, name string, req contract.SyncRequest, stage client.WorkflowUpdateStage) (client.WorkflowUpdateHandle, error) {
	return c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID(name), UpdateName: contract.UpdateSync,
		Args: []any{req}, WaitForStage: stage,
	})
}

// TerminateOp stops the app's running operation (UpdateTerminateOp) and
// returns it once it has ended.
func TerminateOp(ctx context.Context, c client.Client, name string) (*app.OperationState, error) {
	var out *app.OperationState
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID(name), UpdateName: contract.UpdateTerminateOp,
		Args: []any{contract.TerminateOpRequest{}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, &out)
	}
	return out, err
}

// Query answers the status query of a running app. An app that was
// deleted (its workflow closed) or never existed is an *AppNotFoundError,
// as argocd app get answers NotFound: a closed workflow would still answer
// with its last status, which reads as if the app ran on. A query that
// meets the run the app just continued from is asked again of the new run:
// the app runs on.
func Query(ctx context.Context, c client.Client, name string) (*contract.View, error) {
	var v contract.View
	if err := queryApp(ctx, c, name, contract.QueryStatus, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Target answers the app's target (contract.QueryTarget): the commit and
// digest of the manifests it rendered last, which HandOverOpen fetches.
func Target(ctx context.Context, c client.Client, name string) (contract.Target, error) {
	var t contract.Target
	err := queryApp(ctx, c, name, contract.QueryTarget, &t)
	return t, err
}

// queryApp asks the app's workflow the query, once more when it met a
// continue-as-new halfway.
func queryApp(ctx context.Context, c client.Client, name, query string, out any) error {
	for attempt := 1; ; attempt++ {
		res, err := queryOpen(ctx, c, contract.WorkflowID(name), query)
		switch {
		case err != nil && (isNotFound(err) || isDeletedAnswer(name, err)), err == nil && res.QueryRejected != nil:
			if attempt < 3 && runsOn(ctx, c, name) {
				continue
			}
			return &contract.AppNotFoundError{Name: name}
		case err != nil:
			return err
		}
		return res.QueryResult.Get(out)
	}
}

// runsOn: the app's workflow has a run that is running now (after a
// continue-as-new that a query met halfway).
func runsOn(ctx context.Context, c client.Client, name string) bool {
	d, err := c.DescribeWorkflowExecution(ctx, contract.WorkflowID(name), "")
	return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// ListApps calls fn with the name and search attributes of every running
// app, a page of up to 1,000 at a time.
func ListApps(ctx context.Context, c client.Client, fn func(name string, s contract.Summary)) error {
	return ListAppsWhere(ctx, c, "", fn)
}

// ListAppsWhere is ListApps of the apps that also match where, a
// visibility query ("FerryAppNamespace = 'argocd'"); empty: every app.
func ListAppsWhere(ctx context.Context, c client.Client, where string, fn func(name string, s contract.Summary)) error {
	query := "WorkflowType = '" + contract.ApplicationWorkflow + "' AND ExecutionStatus = 'Running'"
	if where != "" {
		query += " AND " + where
	}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:    query,
			PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list the running apps: %w", err)
		}
		for _, e := range resp.Executions {
			if name, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), contract.WorkflowID("")); ok {
				fn(name, contract.SummaryOf(e.SearchAttributes))
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}

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
func StartNew(ctx context.Context, c client.Client, a *app.Application, by contract.SpecRequest) (started bool, err error) {
	if err := CheckAppProject(ctx, c, a, nil); err != nil {
		return false, err
	}
	opts := startOptions(a)
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	_, err = c.ExecuteWorkflow(ctx, opts, contract.ApplicationWorkflow, workflows.NewAppInput(a, by))
	if already := (*serviceerror.WorkflowExecutionAlreadyStarted)(nil); errors.As(err, &already) {
		return false, nil
	}
	return err == nil, err
}

// startOptions starts an app's workflow: on the onboarding queue (its
// first sync there, then it continues as new on ferry), with its summary,
// and a workflow task timeout with room for a new app's first render
// (workflows.AppTaskTimeout; each run after a continue-as-new keeps it).
func startOptions(a *app.Application) client.StartWorkflowOptions {
	summary, details := startSummary(a)
	return client.StartWorkflowOptions{
		StaticSummary: summary, StaticDetails: details,
		ID:                    contract.WorkflowID(a.Metadata.Name),
		TaskQueue:             contract.OnboardTaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowTaskTimeout:   workflows.AppTaskTimeout,
	}
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

// IsAppNotFound: err says that the app does not run (*AppNotFoundError,
// or Temporal's answer for a workflow that is gone or closed).
func IsAppNotFound(err error) bool {
	var nf *contract.AppNotFoundError
	return errors.As(err, &nf) || isNotFound(err)
}

// isDeletedAnswer: err is the status query's own answer of a deleted app
// (statusView), as Temporal hands a query handler's error to the client.
func isDeletedAnswer(name string, err error) bool {
	var qf *serviceerror.QueryFailed
	return errors.As(err, &qf) && qf.Message == (&contract.AppNotFoundError{Name: name}).Error()
}
