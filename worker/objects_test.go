package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// TestObjectOperationKeepsWhoSetIt: the sync an Application object's
// operation field asks for names whom the field names
// (operation.initiatedBy), as Argo CD's controller keeps it.
func TestObjectOperationKeepsWhoSetIt(t *testing.T) {
	c := mocks.NewClient(t)
	h := mocks.NewWorkflowUpdateHandle(t)
	h.On("Get", mock.Anything, mock.Anything).Return(nil)
	var sent client.UpdateWorkflowOptions
	c.On("UpdateWorkflow", mock.Anything, mock.Anything).Run(func(args mock.Arguments) {
		sent = args.Get(1).(client.UpdateWorkflowOptions)
	}).Return(h, nil)

	op, err := appobjects.ReadOperation(map[string]any{"sync": map[string]any{"prune": true}, "initiatedBy": map[string]any{"username": "admin"}})
	require.NoError(t, err)
	require.NoError(t, (&objectApps{c: c}).Sync(context.Background(), "web", "argocd/web", op))
	require.Equal(t, contract.WorkflowID("web"), sent.WorkflowID)
	require.Equal(t, contract.UpdateSync, sent.UpdateName)
	require.Equal(t, []any{contract.SyncRequest{Prune: true, InitiatedBy: &app.InitiatedBy{Username: "admin"}}}, sent.Args)
}
