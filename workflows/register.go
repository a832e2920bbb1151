package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// Registry is what workflows are registered with: a worker, or the replay
// test's replayer.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// Register registers every workflow type under its name in the contract.
// The worker and the replay test both call it, so the histories replay
// against exactly what the worker runs.
func (w *Workflows) Register(r Registry) {
	r.RegisterWorkflowWithOptions(w.Application, workflow.RegisterOptions{Name: contract.ApplicationWorkflow})
	r.RegisterWorkflowWithOptions(w.PostSyncHooks, workflow.RegisterOptions{Name: contract.PostSyncWorkflow})
	r.RegisterWorkflowWithOptions(w.AppProject, workflow.RegisterOptions{Name: contract.ProjectWorkflow})
	r.RegisterWorkflowWithOptions(w.ApplicationSet, workflow.RegisterOptions{Name: contract.AppSetWorkflow})
	r.RegisterWorkflowWithOptions(w.Notification, workflow.RegisterOptions{Name: contract.NotificationWorkflow})
	r.RegisterWorkflowWithOptions(w.HandOverManifests, workflow.RegisterOptions{Name: contract.HandOverWorkflow})
	r.RegisterWorkflowWithOptions(w.RevisionMetadata, workflow.RegisterOptions{Name: contract.RevisionMetadataWorkflow})
	r.RegisterWorkflowWithOptions(w.OnboardGate, workflow.RegisterOptions{Name: contract.OnboardGateWorkflow})
}
