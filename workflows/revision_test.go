package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
)

// TestRevisionMetadata: the workflow answers what its one activity read;
// a revision that names nothing fails at once with the activity's error,
// and a Git server that does not answer is asked three times.
func TestRevisionMetadata(t *testing.T) {
	in := contract.RevisionMetadataInput{App: "guestbook", Project: "default", RepoURL: "https://git.example.com/apps.git", Revision: "1a2b3c4d"}
	read := contract.RevisionMetadataResult{SHA: "1a2b3c4d5e6f1a2b3c4d5e6f1a2b3c4d5e6f1a2b", Author: "Ann <ann@example.com>",
		Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tags: []string{"v1"}, Message: "Raise the replicas\n"}
	tests := []struct {
		name     string
		err      error
		attempts int
		errType  string
	}{
		{"read", nil, 1, ""},
		{"unknown revision", temporal.NewNonRetryableApplicationError("resolve revision: no such branch, tag or commit", contract.ErrRevisionNotFound, nil),
			1, contract.ErrRevisionNotFound},
		{"Git server down", temporal.NewApplicationError("Unreachable: dial tcp: connection refused", contract.ErrUnreachable), 3, contract.ErrUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			New(Config{}).Register(env)
			attempts := 0
			env.RegisterActivityWithOptions(func(_ context.Context, got contract.RevisionMetadataInput) (contract.RevisionMetadataResult, error) {
				attempts++
				require.Equal(t, in, got)
				if tt.err != nil {
					return contract.RevisionMetadataResult{}, tt.err
				}
				return read, nil
			}, activity.RegisterOptions{Name: contract.ActivityRevisionMetadata})
			env.ExecuteWorkflow(contract.RevisionMetadataWorkflow, in)
			require.True(t, env.IsWorkflowCompleted())
			require.Equal(t, tt.attempts, attempts)
			if tt.err == nil {
				require.NoError(t, env.GetWorkflowError())
				var got contract.RevisionMetadataResult
				require.NoError(t, env.GetWorkflowResult(&got))
				require.Equal(t, read, got)
				return
			}
			var ae *temporal.ApplicationError
			require.True(t, errors.As(env.GetWorkflowError(), &ae), "%v", env.GetWorkflowError())
			require.Equal(t, tt.errType, ae.Type())
		})
	}
}
