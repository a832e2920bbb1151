package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// TestCompletionOutlastsAStalledServer: an activity that ended while
// Temporal does not answer for 12 s (a stall of a loaded server, here the
// worker's call to report the completion held that long) is not lost and
// done again after its heartbeat timeout: with the worker's rpcTimeout the
// completion gets through, on the real Temporal server, and the activity
// ran once. With the SDK's default of 10 s it ran twice.
func TestCompletionOutlastsAStalledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	stack, err := devenv.Start(ctx, devenv.Options{Regions: []string{}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stack.Stop()) })

	const stall = 12 * time.Second
	var stalled atomic.Bool
	hold := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/RespondActivityTaskCompleted") && stalled.CompareAndSwap(false, true) {
			select {
			case <-time.After(stall):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: stack.TemporalAddress, Namespace: stack.Namespace, RPCTimeout: rpcTimeout,
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(hold)}}})
	require.NoError(t, err)
	defer c.Close()

	const queue = "stalled-completion"
	w := worker.New(c, queue, worker.Options{MaxHeartbeatThrottleInterval: heartbeatThrottle})
	var runs atomic.Int32
	w.RegisterActivityWithOptions(func(ctx context.Context) (int32, error) {
		runs.Add(1)
		return activity.GetInfo(ctx).Attempt, nil
	}, activity.RegisterOptions{Name: "Apply"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) (int32, error) {
		// A sync's timeouts (workflows.syncCtx): ended within its first
		// heartbeat's interval, it sent none.
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 5 * time.Minute,
			HeartbeatTimeout: 30 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
		var attempt int32
		err := workflow.ExecuteActivity(ctx, "Apply").Get(ctx, &attempt)
		return attempt, err
	}, workflow.RegisterOptions{Name: "Stalled"})
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, "Stalled")
	require.NoError(t, err)
	var attempt int32
	require.NoError(t, run.Get(ctx, &attempt))
	require.True(t, stalled.Load(), "the completion was never held")
	require.EqualValues(t, 1, runs.Load(), "the activity ran again: its completion was lost in the stall")
	require.EqualValues(t, 1, attempt)
}
