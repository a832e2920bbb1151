package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// RevisionMetadata runs ActivityRevisionMetadata on the control queue, for
// ferry-server, which reads no Git. A revision that names nothing fails at
// once (ErrRevisionNotFound); a Git server that does not answer is asked
// three times.
func (w *Workflows) RevisionMetadata(ctx workflow.Context, in contract.RevisionMetadataInput) (contract.RevisionMetadataResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "Read revision " + in.Revision + " of " + in.RepoURL,
		TaskQueue:           contract.TaskQueue,
		StartToCloseTimeout: contract.RevisionMetadataTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumAttempts:    3,
		},
	})
	var out contract.RevisionMetadataResult
	err := workflow.ExecuteActivity(ctx, contract.ActivityRevisionMetadata, in).Get(ctx, &out)
	return out, err
}
