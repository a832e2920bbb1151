package ferryclient

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
)

// RevisionMetadata asks the control workers what a commit of an app's
// repository says of itself, and waits for the answer. Concurrent asks
// for one repository and revision share one workflow.
func RevisionMetadata(ctx context.Context, c client.Client, in contract.RevisionMetadataInput) (contract.RevisionMetadataResult, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       contract.RevisionMetadataWorkflowID(in.RepoURL, in.Revision),
		TaskQueue:                contract.TaskQueue,
		StaticSummary:            "Read revision " + in.Revision + " of " + in.RepoURL,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionTimeout: 4 * contract.RevisionMetadataTimeout,
	}, contract.RevisionMetadataWorkflow, in)
	if err != nil {
		return contract.RevisionMetadataResult{}, fmt.Errorf("app %q: ask the control workers for revision %q: %w", in.App, in.Revision, err)
	}
	var out contract.RevisionMetadataResult
	if err := run.Get(ctx, &out); err != nil {
		return out, fmt.Errorf("app %q: revision %q: %w", in.App, in.Revision, err)
	}
	return out, nil
}

// ErrorType is the type of the application error err carries (an
// activity's, through its workflow: contract.ErrRevisionNotFound, …), and
// its message without the SDK's additions; "" and err's text when it
// carries none.
func ErrorType(err error) (typ, message string) {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Type(), ae.Message()
	}
	return "", err.Error()
}
