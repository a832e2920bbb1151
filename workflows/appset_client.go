package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/ferry-gitops/ferry/internal/appset"
)

// ApplyAppSet creates the set's workflow, or sends a running one the new
// spec, in one update-with-start; the update's validator refuses a bad
// spec before anything changes.
func ApplyAppSet(ctx context.Context, c client.Client, s *appset.ApplicationSet) (AppSetView, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go cancelWithoutWorkers(ctx, c, TaskQueue, cancel)
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		StaticSummary:            "ApplicationSet " + s.Metadata.Name,
		ID:                       AppSetWorkflowID(s.Metadata.Name),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		Memo:                     map[string]any{memoAppSetRepos: s.GitRepos()},
	}, AppSetWorkflow, appSetInput{ApplicationSet: *s})
	handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: UpdateAppSetSpec, Args: []any{s}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var v AppSetView
	if err == nil {
		err = handle.Get(ctx, &v)
	}
	if noWorker := (*NoWorkerError)(nil); err != nil && errors.As(context.Cause(ctx), &noWorker) {
		return v, noWorker
	}
	return v, err
}

// AppSetNotFoundError: no set of that name runs.
type AppSetNotFoundError struct{ Name string }

func (e *AppSetNotFoundError) Error() string {
	return fmt.Sprintf("applicationset %q not found: create it with ferry appset apply -f FILE, or see ferry appset list", e.Name)
}

// GetAppSet answers the status query of a running set.
func GetAppSet(ctx context.Context, c client.Client, name string) (*AppSetView, error) {
	res, err := c.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
		WorkflowID: AppSetWorkflowID(name), QueryType: QueryStatus,
		QueryRejectCondition: enumspb.QUERY_REJECT_CONDITION_NOT_OPEN,
	})
	switch {
	case err != nil && isNotFound(err), err == nil && res.QueryRejected != nil:
		return nil, &AppSetNotFoundError{Name: name}
	case err != nil:
		return nil, err
	}
	var v AppSetView
	if err := res.QueryResult.Get(&v); err != nil {
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
	var token []byte
	dc := converter.GetDefaultDataConverter()
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:    "WorkflowType = '" + AppSetWorkflow + "' AND ExecutionStatus = 'Running'",
			PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list the applicationsets: %w", err)
		}
		for _, e := range resp.Executions {
			name, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), AppSetWorkflowID(""))
			if !ok {
				continue
			}
			sum := AppSetSummary{Name: name}
			if p, ok := e.GetMemo().GetFields()[memoAppSetRepos]; ok {
				_ = dc.FromPayload(p, &sum.Repos)
			}
			if p, ok := e.GetMemo().GetFields()[memoAppSetOwned]; ok {
				_ = dc.FromPayload(p, &sum.Owned)
			}
			out = append(out, sum)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	slices.SortFunc(out, func(a, b AppSetSummary) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b AppSetSummary) bool { return a.Name == b.Name }), nil
}

// DeleteAppSet deletes a set and its apps through its delete update.
func DeleteAppSet(ctx context.Context, c client.Client, name string) error {
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: AppSetWorkflowID(name), UpdateName: UpdateAppSetDelete,
		Args: []any{DeleteAppSetRequest{}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if err != nil && isNotFound(err) {
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
