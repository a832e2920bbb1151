package activities

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/hooks"
	"github.com/ferry-gitops/ferry/internal/kube"
)

var sa = app.ResourceKey{Kind: "ServiceAccount", Namespace: "shop", Name: "Bad_Name"}

func refused() error {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ServiceAccount"}, "Bad_Name", nil)
	return &kube.ObjectErrors{Errs: []*kube.ObjectError{{Key: sa, Op: "apply", Err: invalid}}}
}

// TestOutcomeKeepsResultsWithFailures: a sync that failed for good
// returns its results with the failure inside (Temporal drops the result
// of a failed activity); what another attempt may fix stays the error.
func TestOutcomeKeepsResultsWithFailures(t *testing.T) {
	r := &Region{Name: "us-east-1"}
	results := contract.SyncResult{Results: []app.ResourceResult{{ResourceKey: sa, Region: r.Name, Action: kube.ActionFailed}}}
	cases := []struct {
		name     string
		err      error
		failure  string // the Failure's type; "" for none
		activity bool   // the activity fails
		retried  bool
	}{
		{name: "success", err: nil},
		{name: "refused object", err: refused(), failure: contract.ErrSyncFailed},
		{name: "unhealthy wave", err: &kube.HealthError{Wave: 0, Objects: []string{"Pod/shop/p: Degraded"}}, failure: contract.ErrSyncFailed},
		{name: "failed hook", err: &hooks.FailedError{}, failure: contract.ErrHookFailed},
		{name: "unreachable", err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}, activity: true, retried: true},
		{name: "cancelled", err: context.Canceled, activity: true, retried: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := r.outcome(results, c.err)
			assert.Equal(t, results.Results, out.Results, "the results are kept")
			if c.failure == "" {
				assert.Nil(t, out.Failure)
			} else {
				require.NotNil(t, out.Failure)
				assert.Equal(t, c.failure, out.Failure.Type)
				assert.NotEmpty(t, out.Failure.Message)
				var appErr *temporal.ApplicationError
				require.ErrorAs(t, out.Failure.Err(), &appErr)
				assert.True(t, appErr.NonRetryable(), "the workflow reads it as a non-retryable activity error")
				assert.Equal(t, c.failure, appErr.Type())
			}
			if !c.activity {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var appErr *temporal.ApplicationError
			if errors.As(err, &appErr) {
				assert.Equal(t, !c.retried, appErr.NonRetryable())
			}
		})
	}
}

// TestResultsLeaveHooksToTheirOwnField: the hooks' changes travel as hook
// results, which the workflow deletes per their policy; every other change
// is a result, with its message.
func TestResultsLeaveHooksToTheirOwnField(t *testing.T) {
	r := &Region{Name: "eu-west-1"}
	ns := app.ResourceKey{Kind: "Namespace", Name: "shop"}
	job := app.ResourceKey{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate"}
	cs := &kube.ChangeSet{Entries: []kube.Change{
		{Key: ns, Action: kube.ActionCreated},
		{Key: job, Action: kube.ActionFailed, Message: "BackoffLimitExceeded", Hook: "Sync"},
		{Key: sa, Action: kube.ActionFailed, Message: "apply: Invalid value"},
	}}
	assert.Equal(t, []app.ResourceResult{
		{ResourceKey: ns, Region: "eu-west-1", Action: kube.ActionCreated},
		{ResourceKey: sa, Region: "eu-west-1", Action: kube.ActionFailed, Message: "apply: Invalid value"},
	}, r.results(cs))
	assert.Nil(t, r.results(nil), "no change set (refused before the first write): no results")
}

// TestClassify: what no retry can fix is non-retryable with its type;
// an unreachable server is retried and says so.
func TestClassify(t *testing.T) {
	cases := []struct {
		err       error
		typ       string
		retryable bool
	}{
		{refused(), contract.ErrSyncFailed, false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, contract.ErrUnreachable, true},
		{temporal.NewNonRetryableApplicationError("denied", contract.ErrProjectDenied, nil), contract.ErrProjectDenied, false},
		{errors.New("etcd leader changed"), "", true},
	}
	for _, c := range cases {
		var appErr *temporal.ApplicationError
		require.ErrorAs(t, classify(c.err), &appErr, "%v", c.err)
		assert.Equal(t, c.typ, appErr.Type(), "%v", c.err)
		assert.Equal(t, c.retryable, !appErr.NonRetryable(), "%v", c.err)
	}
	assert.NoError(t, classify(nil))
	assert.ErrorIs(t, classify(context.Canceled), context.Canceled)
}
