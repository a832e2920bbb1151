package ferryclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/handover"
	"github.com/ferry-gitops/ferry/internal/manifests"
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

// ErrHandedOverDigest: the manifests handed over are not the ones the
// app's workflow rendered (their digest differs from the target's).
var ErrHandedOverDigest = errors.New("the manifests handed over are not the ones the app's workflow rendered")

// HandOverOpen has the control side hand the target's manifests over,
// sealed to keys, opens them and checks them against the target's digest.
// It answers the encoded set (manifests.Decode reads it). in.PublicKey is
// set from keys.
func HandOverOpen(ctx context.Context, c client.Client, keys *handover.Keys, in contract.HandOverInput) ([]byte, error) {
	in.PublicKey = keys.Public()
	t := in.Target
	res, err := HandOver(ctx, c, in)
	if err != nil {
		return nil, err
	}
	payload, err := keys.Open(res.Sealed)
	if err != nil {
		return nil, fmt.Errorf("app %q: %w", t.App, err)
	}
	objs, err := manifests.Decode(payload)
	if err != nil {
		return nil, fmt.Errorf("app %q: the handed-over manifests of %.12s: %w", t.App, t.SHA, err)
	}
	if digest, err := manifests.Digest(objs); err != nil || digest != t.Digest {
		return nil, fmt.Errorf("app %q: %w (%.12s: digest %.12s, want %.12s)", t.App, ErrHandedOverDigest, t.SHA, digest, t.Digest)
	}
	return payload, nil
}
