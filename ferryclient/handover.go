package ferryclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// HandOver asks the control side for a target's manifests and waits for
// them. Concurrent asks of one worker (one key) for one set share one
// workflow.
func HandOver(ctx context.Context, c client.Client, in contract.HandOverInput) (contract.HandOverResult, error) {
	key := sha256.Sum256(in.PublicKey)
	id := fmt.Sprintf("manifests/%s/%s/%s", in.Region, strings.TrimPrefix(in.Target.Digest, "sha256:"), hex.EncodeToString(key[:6]))
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                contract.TaskQueue,
		StaticSummary:            "Hand over " + in.Target.App + "'s manifests to " + in.Region,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionTimeout: 2 * contract.HandOverTimeout,
	}, contract.HandOverWorkflow, in)
	if err != nil {
		return contract.HandOverResult{}, fmt.Errorf("app %q: ask the control workers for the manifests of %.12s: %w", in.Target.App, in.Target.SHA, err)
	}
	var out contract.HandOverResult
	if err := run.Get(ctx, &out); err != nil {
		return out, fmt.Errorf("app %q: the control workers handed over no manifests of %.12s: %w", in.Target.App, in.Target.SHA, err)
	}
	return out, nil
}
