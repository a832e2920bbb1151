package kube_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/kube"
)

func TestPollEndsWhenCheckIsDone(t *testing.T) {
	calls := 0
	err := kube.Poll(context.Background(), 0, func(context.Context) (bool, error) {
		calls++
		return calls == 3, nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls, "checks until done, and no more")
}

func TestPollReturnsTheCheckError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	err := kube.Poll(context.Background(), 0, func(context.Context) (bool, error) {
		calls++
		return false, boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, calls, "an error stops the wait at once")
}

func TestPollEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := kube.Poll(ctx, 0, func(context.Context) (bool, error) {
		if calls++; calls == 2 {
			cancel()
		}
		return false, nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, calls, "no check after the context ended")
}
