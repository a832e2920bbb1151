package activities

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/hooks"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
)

// beatCounter runs activities in a test environment and counts the
// heartbeats they record, with the last one's details.
type beatCounter struct {
	env  *testsuite.TestActivityEnvironment
	n    atomic.Int64
	last atomic.Value
	// beat hears of each heartbeat, without blocking the one who sends it.
	beat chan struct{}
}

func newBeatCounter() *beatCounter {
	var s testsuite.WorkflowTestSuite
	b := &beatCounter{env: s.NewTestActivityEnvironment(), beat: make(chan struct{}, 1)}
	b.env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var what string
		if d.HasValues() && d.Get(&what) == nil {
			b.last.Store(what)
		}
		b.n.Add(1)
		select {
		case b.beat <- struct{}{}:
		default:
		}
	})
	return b
}

// run runs fn as an activity and returns what it returned.
func (b *beatCounter) run(t *testing.T, fn func(ctx context.Context) (int64, error)) int64 {
	b.env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: "beat"})
	v, err := b.env.ExecuteActivity("beat")
	require.NoError(t, err)
	var out int64
	require.NoError(t, v.Get(&out))
	return out
}

// TestHeartbeatEvery: a long activity heartbeats with what it is doing
// until it stops, and stop returns once no heartbeat is in flight, so none
// is sent for an activity that has ended; a short one sends none.
func TestHeartbeatEvery(t *testing.T) {
	t.Run("long", func(t *testing.T) {
		b := newBeatCounter()
		atStop := b.run(t, func(ctx context.Context) (int64, error) {
			stop := heartbeatEvery(ctx, time.Millisecond, "compare")
			// The SDK sends the first heartbeat at once and batches the
			// next ones per throttle interval (30 s in the test
			// environment): one is what a test sees.
			<-b.beat
			stop()
			return b.n.Load(), nil
		})
		assert.GreaterOrEqual(t, atStop, int64(1))
		assert.Equal(t, atStop, b.n.Load(), "no heartbeat after stop returned")
		assert.Equal(t, "compare", b.last.Load(), "a heartbeat says what the activity does")
	})
	t.Run("short", func(t *testing.T) {
		b := newBeatCounter()
		b.run(t, func(ctx context.Context) (int64, error) {
			heartbeatEvery(ctx, time.Hour, "sync")()
			return 0, nil
		})
		assert.Zero(t, b.n.Load(), "the first beat comes after one interval")
	})
	t.Run("outside an activity", func(t *testing.T) {
		// A benchmark calls Compare directly: a heartbeat there would
		// panic (not an activity context).
		stop := heartbeatEvery(context.Background(), time.Millisecond, "compare")
		time.Sleep(20 * time.Millisecond)
		stop()
	})
}

// TestWrongRegion: work scheduled on another region's queue fails for good
// before anything is read or written, naming both regions and the queue.
func TestWrongRegion(t *testing.T) {
	// No cluster: a call that reached it would panic.
	r := &Region{Name: "us-east-1", DisableLiveCache: true}
	target := contract.Target{App: "web", SHA: "0123456789abcdef0123456789abcdef01234567", Digest: "d"}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(r.Compare)
	env.RegisterActivity(r.Sync)
	env.RegisterActivity(r.DeleteResources)
	env.RegisterActivity(r.DeleteHooks)
	env.RegisterActivity(r.RunHooks)
	calls := map[string]func() error{
		"Compare": func() error {
			_, err := env.ExecuteActivity(r.Compare, contract.CompareInput{Region: "eu-west-1", Target: target})
			return err
		},
		"Sync": func() error {
			_, err := env.ExecuteActivity(r.Sync, contract.SyncInput{Region: "eu-west-1", Target: target})
			return err
		},
		"DeleteResources": func() error {
			_, err := env.ExecuteActivity(r.DeleteResources, contract.DeleteInput{Region: "eu-west-1", App: "web"})
			return err
		},
		"DeleteHooks": func() error {
			_, err := env.ExecuteActivity(r.DeleteHooks, contract.DeleteHooksInput{Region: "eu-west-1", App: "web"})
			return err
		},
		"RunHooks": func() error {
			_, err := env.ExecuteActivity(r.RunHooks, contract.RunHooksInput{Region: "eu-west-1", Target: target})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, contract.ErrWrongRegion, appErr.Type())
			assert.True(t, appErr.NonRetryable())
			assert.Contains(t, appErr.Error(), "a worker of region us-east-1 got work for region eu-west-1")
			assert.Contains(t, appErr.Error(), contract.RegionQueue("us-east-1"))
		})
	}
}

// TestClassifyHooks: a hook that failed, or cannot run as written, ends
// the run for good with the results so far as details; a cancel stays a
// cancel; the rest is classified as any region error.
func TestClassifyHooks(t *testing.T) {
	r := &Region{Name: "eu-west-1"}
	job := app.ResourceKey{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate"}
	sofar := contract.RunHooksResult{Hooks: []contract.HookResult{{ResourceKey: job, Region: r.Name, Phase: "PreSync", Status: "Failed", Message: "BackoffLimitExceeded"}}}
	for _, hookErr := range []error{&hooks.FailedError{}, &hooks.InvalidError{}} {
		err := r.classifyHooks(hookErr, sofar)
		var appErr *temporal.ApplicationError
		require.ErrorAs(t, err, &appErr)
		assert.Equal(t, contract.ErrHookFailed, appErr.Type())
		assert.True(t, appErr.NonRetryable())
		assert.True(t, strings.HasPrefix(appErr.Error(), "eu-west-1: "), "names the region: %v", appErr)
		var got contract.RunHooksResult
		require.True(t, appErr.HasDetails())
		require.NoError(t, appErr.Details(&got))
		assert.Equal(t, sofar, got, "the results so far travel with the failure")
	}
	assert.ErrorIs(t, r.classifyHooks(context.Canceled, sofar), context.Canceled)
	assert.NoError(t, r.classifyHooks(nil, sofar))
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, r.classifyHooks(&net.OpError{Op: "dial", Err: errors.New("connection refused")}, sofar), &appErr)
	assert.Equal(t, contract.ErrUnreachable, appErr.Type())
	assert.False(t, appErr.NonRetryable())
}

// TestHookResultsAndStatuses: the adapters copy what the domain found,
// the region added, the reason of a resource's health included.
func TestHookResultsAndStatuses(t *testing.T) {
	r := &Region{Name: "ap-south-1"}
	job := app.ResourceKey{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate"}
	assert.Equal(t, []contract.HookResult{{ResourceKey: job, Region: r.Name, Phase: "Sync", Wave: 2, Status: "Failed", Message: "BackoffLimitExceeded",
		Delete: true}}, r.hookResults([]hooks.Result{{Key: job, Phase: app.HookTypeSync, Wave: 2, Status: hooks.Failed, Message: "BackoffLimitExceeded", Delete: true}}))
	web := app.ResourceKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	assert.Equal(t, []app.ResourceStatus{{ResourceKey: web, Region: r.Name, Status: "Synced", Health: "Degraded",
		HealthMessage: `container "web": CrashLoopBackOff`}},
		r.statuses([]kube.ResourceState{{Key: web, Sync: "Synced", Health: "Degraded", HealthMessage: `container "web": CrashLoopBackOff`}}))
}

func object(apiVersion, kind, namespace, name string, labels map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace(namespace)
	o.SetName(name)
	o.SetLabels(labels)
	return o
}

// TestSelected: a selective sync applies what it names (an object without
// a namespace matched in the app's), prunes among the named previous keys
// only, and one that names nothing fails for good.
func TestSelected(t *testing.T) {
	web := object("apps/v1", "Deployment", "", "web", map[string]string{"tier": "front"})
	db := object("apps/v1", "StatefulSet", "data", "db", map[string]string{"tier": "back"})
	objs := []*unstructured.Unstructured{web, db}
	old := app.ResourceKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web-old"}
	known := []app.ResourceKey{old, {Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}}

	gotObjs, gotKnown, err := selected(objs, known, "shop", nil)
	require.NoError(t, err)
	assert.Equal(t, objs, gotObjs, "no selection: everything")
	assert.Equal(t, known, gotKnown)

	gotObjs, gotKnown, err = selected(objs, known, "shop", &app.Selection{Resources: []app.SyncResource{{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web*"}}})
	require.NoError(t, err)
	assert.Equal(t, []*unstructured.Unstructured{web}, gotObjs, "matched in the app's namespace")
	assert.Equal(t, []app.ResourceKey{old}, gotKnown, "a named leftover may be pruned")

	gotObjs, gotKnown, err = selected(objs, known, "shop", &app.Selection{Labels: []string{"tier=back"}})
	require.NoError(t, err)
	assert.Equal(t, []*unstructured.Unstructured{db}, gotObjs)
	assert.Empty(t, gotKnown, "a pruned object's labels are not in Git: a label selection prunes nothing")

	_, _, err = selected(objs, known, "shop", &app.Selection{Resources: []app.SyncResource{{Kind: "Secret", Name: "token"}}})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, contract.ErrInvalidManifests, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, appErr.Error(), ":Secret:token")
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestClassifyDomainErrors: each domain's "no retry can fix this" becomes
// the non-retryable type the workflow reports; a server that did not
// answer is retried as Unreachable; the message is kept.
func TestClassifyDomainErrors(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		typ       string
		retryable bool
	}{
		{"render refused the source", &render.SourceError{Path: "guestbook", Msg: "directory.include: glob \"{a\": bad"}, contract.ErrInvalidManifests, false},
		{"a remembered render failure", &manifests.FailedError{Msg: "render guestbook: bad"}, contract.ErrInvalidManifests, false},
		{"revision not found", fmt.Errorf("resolve: %w", &gitsource.RevisionNotFoundError{RepoURL: "https://git.example.com/a.git", Revision: "nope"}), contract.ErrInvalidSource, false},
		{"git limit", &gitsource.LimitError{What: "file size", Limit: 1 << 20}, contract.ErrInvalidSource, false},
		{"credential over plain http", &gitsource.PlainHTTPError{Host: "git.example.com", Fix: "allow it"}, contract.ErrInvalidSource, false},
		{"chart not found", &chartsource.NotFoundError{RepoURL: "https://charts.example.com", Chart: "web", Revision: "9.9.9"}, contract.ErrInvalidSource, false},
		{"chart limit", &chartsource.LimitError{What: "chart size", Limit: 1 << 20}, contract.ErrInvalidSource, false},
		{"API server timed out", fmt.Errorf("get deployments: %w", timeoutError{}), contract.ErrUnreachable, true},
		{"API server refused an object", refused(), contract.ErrSyncFailed, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, classify(c.err), &appErr)
			assert.Equal(t, c.typ, appErr.Type())
			assert.Equal(t, c.retryable, !appErr.NonRetryable())
			assert.Contains(t, appErr.Error(), c.err.Error(), "the message is kept")
		})
	}
}
