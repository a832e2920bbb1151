package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/ferry-gitops/ferry/internal/appset"
)

// ApplyAppSet creates the set's workflow, or sends a running one the new
// spec, in one update-with-start; the update's validator refuses a bad
// spec before anything changes.
func ApplyAppSet(ctx context.Context, c client.Client, s *appset.ApplicationSet) (AppSetView, error) {
	var v AppSetView
	err := appSets.applyWithStart(ctx, c, s.Metadata.Name, "ApplicationSet "+s.Metadata.Name,
		map[string]any{memoAppSetRepos: s.GitRepos()}, appSetInput{ApplicationSet: *s}, UpdateAppSetSpec, []any{s}, &v)
	return v, err
}

// appSets are the ApplicationSet workflows.
var appSets = objectWorkflow{Type: AppSetWorkflow, IDPrefix: AppSetWorkflowID(""), Noun: "applicationsets"}

// AppSetNotFoundError: no set of that name runs.
type AppSetNotFoundError struct{ Name string }

func (e *AppSetNotFoundError) Error() string {
	return fmt.Sprintf("applicationset %q not found: create it with ferry appset apply -f FILE, or see ferry appset list", e.Name)
}

// GetAppSet answers the status query of a running set.
func GetAppSet(ctx context.Context, c client.Client, name string) (*AppSetView, error) {
	var v AppSetView
	switch err := appSets.query(ctx, c, name, QueryStatus, &v); {
	case errors.Is(err, errNotRunning):
		return nil, &AppSetNotFoundError{Name: name}
	case err != nil:
		return nil, err
	}
	return &v, nil
}

// AppSetSummary is a running set as a listing sees it.
type AppSetSummary struct {
	Name  string
	Repos []string
	// Owned are the apps the set owns, as it last published them.
	Owned []string
}

// ListAppSets lists the running sets in name order, with the repositories
// of their git generators.
func ListAppSets(ctx context.Context, c client.Client) ([]AppSetSummary, error) {
	var out []AppSetSummary
	dc := converter.GetDefaultDataConverter()
	err := appSets.listRunning(ctx, c, func(name string, e *workflowpb.WorkflowExecutionInfo) {
		sum := AppSetSummary{Name: name}
		if p, ok := e.GetMemo().GetFields()[memoAppSetRepos]; ok {
			_ = dc.FromPayload(p, &sum.Repos)
		}
		if p, ok := e.GetMemo().GetFields()[memoAppSetOwned]; ok {
			_ = dc.FromPayload(p, &sum.Owned)
		}
		out = append(out, sum)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b AppSetSummary) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b AppSetSummary) bool { return a.Name == b.Name }), nil
}

// DeleteAppSet deletes a set and its apps through its delete update.
func DeleteAppSet(ctx context.Context, c client.Client, name string) error {
	err := appSets.update(ctx, c, name, UpdateAppSetDelete, DeleteAppSetRequest{})
	if errors.Is(err, errNotRunning) {
		return &AppSetNotFoundError{Name: name}
	}
	return err
}

// RefreshAppSet runs the set's generators now.
func RefreshAppSet(ctx context.Context, c client.Client, name string) error {
	err := c.SignalWorkflow(ctx, AppSetWorkflowID(name), "", SignalRefresh, RefreshRequest{Hard: true})
	if err != nil && isNotFound(err) {
		return &AppSetNotFoundError{Name: name}
	}
	return err
}
