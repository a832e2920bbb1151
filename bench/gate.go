package bench

import (
	"context"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/ferry-gitops/ferry/contract"
)

// gateText is the data of text/gate.md.tmpl: the onboarding gate's runs,
// their events, and its workflow tasks that failed, by cause (each such
// task is run again by a worker that replays the run from its start).
type gateText struct {
	Runs, Events, Failed int
	Causes               []string
}

func (gateText) textFile() string { return "gate" }

// gateTasks reads every run of the onboarding gate's workflow.
func (e *Env) gateTasks(ctx context.Context) (gateText, error) {
	var d gateText
	var causes []string
	var token []byte
	for {
		resp, err := e.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.Stack.Namespace, PageSize: 100, NextPageToken: token,
			Query: fmt.Sprintf("WorkflowId = '%s'", contract.OnboardGateID),
		})
		if err != nil {
			return d, fmt.Errorf("list the gate's runs: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			d.Runs++
			if err := e.gateRun(ctx, ex.GetExecution(), &d, &causes); err != nil {
				return d, err
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	d.Causes = tally(causes)
	return d, nil
}

// gateRun counts one run's events and its failed workflow tasks' causes.
func (e *Env) gateRun(ctx context.Context, run *commonpb.WorkflowExecution, d *gateText, causes *[]string) error {
	it := e.Temporal.GetWorkflowHistory(ctx, run.GetWorkflowId(), run.GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return fmt.Errorf("history of the gate's run %s: %w", run.GetRunId(), err)
		}
		d.Events++
		if f := ev.GetWorkflowTaskFailedEventAttributes(); f != nil {
			d.Failed++
			*causes = append(*causes, f.GetCause().String())
		}
	}
	return nil
}
