package ferryclient

import (
	"context"
	"errors"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// queryPatience is how long a query of a running workflow waits for a
// worker to answer it. The server holds a query behind the workflow's
// pending or started workflow task until a worker completes that task; a
// task left by a worker that stopped or died goes to another worker only
// after its timeout (workflows.AppTaskTimeout, or the sticky queue's few
// seconds), so for that long after a worker restart a query meets no
// worker. The SDK gives one call 10 s; queryOpen asks again until
// queryPatience has passed.
const queryPatience = workflows.AppTaskTimeout + 15*time.Second

// queryOpen asks the running workflow id the query, and asks again while
// the server answers that no worker took it in time, for up to
// queryPatience: `ferry app get` during a worker restart answers once the
// next worker is up, as kubectl get answers while a controller restarts.
// When, after a try, no control worker has polled in the last
// pollerFresh, it returns a *NoWorkerError instead of asking again.
func queryOpen(ctx context.Context, c client.Client, id, queryType string) (*client.QueryWorkflowWithOptionsResponse, error) {
	giveUp := time.Now().Add(queryPatience)
	for {
		res, err := c.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
			WorkflowID: id, QueryType: queryType,
			QueryRejectCondition: enumspb.QUERY_REJECT_CONDITION_NOT_OPEN,
		})
		switch {
		case !unanswered(err) || ctx.Err() != nil:
			return res, err
		case !workerPolled(ctx, c):
			return nil, &contract.NoWorkerError{TaskQueue: contract.TaskQueue}
		case time.Now().After(giveUp):
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
	}
}

// unanswered: the query's call ended before a worker took the query. The
// server says so (DeadlineExceeded), or its stream ends cancelled as the
// call's deadline passes (Canceled), whichever comes first.
func unanswered(err error) bool {
	var late *serviceerror.DeadlineExceeded
	var cancelled *serviceerror.Canceled
	return errors.As(err, &late) || errors.As(err, &cancelled)
}

// workerPolled: a control worker polled in the last pollerFresh (one that
// stopped a moment ago counts: its successor is on its way). A failed look
// is no verdict.
func workerPolled(ctx context.Context, c client.Client) bool {
	resp, err := c.DescribeTaskQueue(ctx, contract.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	return err != nil || anyPolledWithin(resp.GetPollers(), pollerFresh)
}
