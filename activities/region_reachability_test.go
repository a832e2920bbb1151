package activities

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

var errFrozen = errors.New("Get \"https://127.0.0.1:6443/readyz\": context deadline exceeded")

// TestWhileAnsweringEndsASyncOnceTheRegionIsSilent: a sync runs while the
// probes find its region answering; once they find it silent, what the
// sync waits on (a request to a frozen API server, a wave's wait) is
// cancelled and the sync learns why.
func TestWhileAnsweringEndsASyncOnceTheRegionIsSilent(t *testing.T) {
	t.Run("answering throughout", func(t *testing.T) {
		ctx, stop := whileAnswering(context.Background(), func() error { return nil }, time.Millisecond)
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, ctx.Err(), "the sync runs on")
		assert.NoError(t, stop())
		assert.Error(t, ctx.Err(), "stop releases the context")
	})
	t.Run("silent mid-sync", func(t *testing.T) {
		var looks atomic.Int32
		ctx, stop := whileAnswering(context.Background(), func() error {
			if looks.Add(1) < 3 {
				return nil
			}
			return errFrozen
		}, time.Millisecond)
		select {
		case <-ctx.Done(): // the hung request returns
		case <-time.After(10 * time.Second):
			t.Fatal("the sync was not ended once its region went silent")
		}
		assert.ErrorIs(t, stop(), errFrozen)
	})
	t.Run("silent before it starts", func(t *testing.T) {
		ctx, stop := whileAnswering(context.Background(), func() error { return errFrozen }, time.Hour)
		<-ctx.Done()
		assert.ErrorIs(t, stop(), errFrozen)
	})
	t.Run("the activity ends first", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		ctx, stop := whileAnswering(parent, func() error { return nil }, time.Millisecond)
		cancel()
		<-ctx.Done()
		assert.NoError(t, stop(), "not a silence")
	})
}

// TestSilencedSyncIsUnreachable: the failure of a sync its region's
// silence ended says so, and the workflow reads it as a non-retryable
// Unreachable error (the region is shown Unreachable and synced once it
// answers, without another attempt hanging meanwhile).
func TestSilencedSyncIsUnreachable(t *testing.T) {
	r := &Region{Name: "eu-west-1"}
	f := r.silencedFailure(errFrozen)
	assert.Equal(t, contract.ErrUnreachable, f.Type)
	assert.Contains(t, f.Message, "Unreachable: region eu-west-1: its API server stopped answering during the sync")
	assert.Contains(t, f.Message, "syncs again once it answers")
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, f.Err(), &appErr)
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, contract.ErrUnreachable, appErr.Type())
}

// TestSilenceWithoutProbes: without a live cache there are no probes, and
// no silence to tell.
func TestSilenceWithoutProbes(t *testing.T) {
	assert.NoError(t, (&Region{Name: "us-east-1", DisableLiveCache: true}).silence())
	assert.NoError(t, (&Region{Name: "us-east-1"}).silence(), "no Cluster")
}

// TestHooksEndOnceTheRegionIsSilent: a phase's hooks wait (a Job that
// cannot run) while the probes find the region answering; once they find
// it silent, the wait ends and the hook activity fails Unreachable, not
// retried, instead of waiting for the hook's timeout.
func TestHooksEndOnceTheRegionIsSilent(t *testing.T) {
	var looks atomic.Int32
	silent, err := answering(context.Background(), func() error {
		if looks.Add(1) < 3 {
			return nil
		}
		return errFrozen
	}, time.Millisecond, func(ctx context.Context) error {
		<-ctx.Done() // the hook's wait, or a request to the frozen server
		return ctx.Err()
	})
	require.ErrorIs(t, silent, errFrozen)
	require.ErrorIs(t, err, context.Canceled, "the wait was ended")

	r := &Region{Name: "eu-west-1"}
	got := r.silencedHooks("its PreSync hooks", silent)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, got, &appErr)
	assert.True(t, appErr.NonRetryable(), "another attempt would wait on the silent server too")
	assert.Equal(t, contract.ErrUnreachable, appErr.Type())
	assert.False(t, appErr.HasDetails(), "no results to delete in a region that does not answer")
	assert.Equal(t, "Unreachable: region eu-west-1: its API server stopped answering during its PreSync hooks ("+errFrozen.Error()+
		"); what was applied before stays, and the region syncs again once it answers", appErr.Message())

	t.Run("answering throughout", func(t *testing.T) {
		silent, err := answering(context.Background(), func() error { return nil }, time.Millisecond, func(context.Context) error {
			time.Sleep(10 * time.Millisecond)
			return nil
		})
		assert.NoError(t, silent)
		assert.NoError(t, err)
	})
}

// TestClassifyKeepsOursPlain: a non-retryable error of ours from deep
// inside, wrapped on its way out, keeps its type, and its message reads as
// the user should read it: without the SDK's "(type: …)" in the middle.
func TestClassifyKeepsOursPlain(t *testing.T) {
	inner := temporal.NewNonRetryableApplicationError("app \"shop\": project \"team-a\" denies the destination", contract.ErrProjectDenied, nil)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, classify(fmt.Errorf("region eu-west-1: who the sync writes as: %w", inner)), &appErr)
	assert.Equal(t, contract.ErrProjectDenied, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, "region eu-west-1: who the sync writes as: app \"shop\": project \"team-a\" denies the destination", appErr.Message())
}
