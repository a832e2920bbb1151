package ferryclient

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/workflows"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// ApplyAppSet creates the set's workflow, or sends a running one the new
// spec, in one update-with-start; the update's validator refuses a bad
// spec before anything changes.
func ApplyAppSet(ctx context.Context, c client.Client, s *appset.ApplicationSet) (contract.AppSetView, error) {
	var v contract.AppSetView
	err := appSets.applyWithStart(ctx, c, s.Metadata.Name, "ApplicationSet "+s.Metadata.Name,
		map[string]any{contract.MemoAppSetRepos: s.GitRepos()}, workflows.AppSetInput{ApplicationSet: *s}, contract.UpdateAppSetSpec, []any{s}, &v)
	return v, err
}

// appSets are the ApplicationSet workflows.
var appSets = objectWorkflow{Type: contract.AppSetWorkflow, IDPrefix: contract.AppSetWorkflowID(""), Noun: "applicationsets"}

// GetAppSet answers the status query of a running set.
func GetAppSet(ctx context.Context, c client.Client, name string) (*contract.AppSetView, error) {
	var v contract.AppSetView
	switch err := appSets.query(ctx, c, name, contract.QueryStatus, &v); {
	case errors.Is(err, errNotRunning):
		return nil, &contract.AppSetNotFoundError{Name: name}
	case err != nil:
		return nil, err
	}
	return &v, nil
}

// ListAppSets lists the running sets in name order, with the repositories
// of their git generators.
func ListAppSets(ctx context.Context, c client.Client) ([]contract.AppSetSummary, error) {
	var out []contract.AppSetSummary
	dc := converter.GetDefaultDataConverter()
	err := appSets.listRunning(ctx, c, func(name string, e *workflowpb.WorkflowExecutionInfo) {
		sum := contract.AppSetSummary{Name: name}
		if p, ok := e.GetMemo().GetFields()[contract.MemoAppSetRepos]; ok {
			_ = dc.FromPayload(p, &sum.Repos)
		}
		if p, ok := e.GetMemo().GetFields()[contract.MemoAppSetOwned]; ok {
			_ = dc.FromPayload(p, &sum.Owned)
		}
		out = append(out, sum)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b contract.AppSetSummary) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b contract.AppSetSummary) bool { return a.Name == b.Name }), nil
}

// DeleteAppSet deletes a set and its apps through its delete update.
func DeleteAppSet(ctx context.Context, c client.Client, name string) error {
	err := appSets.update(ctx, c, name, contract.UpdateAppSetDelete, contract.DeleteAppSetRequest{})
	if errors.Is(err, errNotRunning) {
		return &contract.AppSetNotFoundError{Name: name}
	}
	return err
}

// RefreshAppSet runs the set's generators now.
func RefreshAppSet(ctx context.Context, c client.Client, name string) error {
	err := c.SignalWorkflow(ctx, contract.AppSetWorkflowID(name), "", contract.SignalRefresh, contract.RefreshRequest{Hard: true})
	if err != nil && isNotFound(err) {
		return &contract.AppSetNotFoundError{Name: name}
	}
	return err
}
