package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// conditionDeletionPending is the condition of an app whose cascading
// delete waits for its confirmation.
const conditionDeletionPending = "DeletionPending"

// validateConfirm refuses a confirmation that nothing could use.
func (s *appState) validateConfirm(ctx workflow.Context, _ contract.ConfirmRequest) error {
	if s.deletion != nil || s.operationRunning() {
		return nil
	}
	return fmt.Errorf("app %q: nothing waits for a confirmation: ferry app confirm lets a running sync prune what is marked Prune=confirm, "+
		"or a cascading delete delete what is marked Delete=confirm (see ferry app get %s)", s.app.Metadata.Name, s.app.Metadata.Name)
}

func (s *appState) handleConfirm(ctx workflow.Context, _ contract.ConfirmRequest) (contract.ConfirmResult, error) {
	var out contract.ConfirmResult
	if s.operationRunning() {
		s.pruneConfirmedOp = s.Status.OperationState.ID
		out.Operation = s.pruneConfirmedOp
	}
	if s.deletion != nil {
		s.deletion.confirmed = true
		out.Deletion = true
	}
	return out, nil
}

func (s *appState) operationRunning() bool {
	op := s.Status.OperationState
	return op != nil && op.Phase == app.OperationRunning
}

// awaitPruneConfirmation holds a sync whose prune waits for its
// confirmation (the regions reported objects marked Prune=confirm in
// op.awaitingPrune) until ferry app confirm: the operation stays Running
// and says what it waits for, as Argo CD's does. again is true once
// confirmed: the operation syncs once more, now pruning. A delete of the
// app ends the wait, and the operation fails.
func (s *appState) awaitPruneConfirmation(ctx workflow.Context, op *operation) (again bool, err error) {
	p := &op.params
	if len(op.awaitingPrune) == 0 || p.pruneConfirmed || p.dryRun {
		return false, nil
	}
	op.state.Phase, op.state.Message = app.OperationRunning, waitingMessage("pruning", op.awaitingPrune)
	s.publish(ctx)
	if err := workflow.Await(ctx, func() bool { return s.pruneConfirmedOp == op.id() || s.deletion != nil }); err != nil {
		return false, err
	}
	if s.pruneConfirmedOp != op.id() {
		return false, &syncError{msg: "pruning was not confirmed before the app's deletion began", permanent: true}
	}
	p.pruneConfirmed = true
	return true, nil
}

// awaitDeleteConfirmation holds a cascading delete that objects marked
// Delete=confirm hold back until ferry app confirm. The delete update
// answers meanwhile that the deletion waits (pendingDelete.waiting).
func (s *appState) awaitDeleteConfirmation(ctx workflow.Context, awaiting []app.ResourceKey) error {
	p := s.deletion
	p.waiting = waitingMessage("deletion", awaiting) + ": ferry app confirm " + s.app.Metadata.Name + " deletes them"
	s.setCondition(conditionDeletionPending, p.waiting)
	s.publish(ctx)
	defer s.clearCondition(conditionDeletionPending)
	return workflow.Await(ctx, func() bool { return p.confirmed })
}

// waitingMessage is Argo CD's: "Waiting for pruning confirmation of
// apps/v1/Deployment/web and 2 more resources".
func waitingMessage(what string, keys []app.ResourceKey) string {
	var names []string
	for _, k := range keys {
		gv := k.Version
		if k.Group != "" {
			gv = k.Group + "/" + k.Version
		}
		name := gv + "/" + k.Kind + "/" + k.Name
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	msg := fmt.Sprintf("Waiting for %s confirmation of %s", what, names[0])
	if len(names) > 1 {
		msg += fmt.Sprintf(" and %d more resources", len(names)-1)
	}
	return msg
}
