package ferryclient

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// EachEvent calls fn with every event of the workflow's runs, from the
// first run of its chain to the latest: an app's first run continues as
// new once it has onboarded (contract.OnboardTaskQueue), and every run
// after so many reconciles. Event IDs begin again with each run.
func EachEvent(ctx context.Context, c client.Client, workflowID string, fn func(*historypb.HistoryEvent) error) error {
	latest := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !latest.HasNext() {
		return fmt.Errorf("workflow %s has no history", workflowID)
	}
	first, err := latest.Next()
	if err != nil {
		return fmt.Errorf("history of %s: %w", workflowID, err)
	}
	run := first.GetWorkflowExecutionStartedEventAttributes().GetFirstExecutionRunId()
	if run == "" { // a server that does not name the first run: the latest alone
		for ev := first; ; {
			if err := fn(ev); err != nil || !latest.HasNext() {
				return err
			}
			if ev, err = latest.Next(); err != nil {
				return fmt.Errorf("history of %s: %w", workflowID, err)
			}
		}
	}
	for run != "" {
		it := c.GetWorkflowHistory(ctx, workflowID, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		run = ""
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return fmt.Errorf("history of %s: %w", workflowID, err)
			}
			if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				run = a.GetNewExecutionRunId()
			}
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
	return nil
}
