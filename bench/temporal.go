package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// runLength is where an app's current run stands: its run ID and how many
// events its history has.
type runLength struct {
	RunID  string
	Events int64
}

func (e *Env) runLength(ctx context.Context, name string) (runLength, error) {
	d, err := e.Temporal.DescribeWorkflowExecution(ctx, contract.WorkflowID(name), "")
	if err != nil {
		return runLength{}, err
	}
	info := d.GetWorkflowExecutionInfo()
	return runLength{RunID: info.GetExecution().GetRunId(), Events: info.GetHistoryLength()}, nil
}

// pollCycle is one idle reconcile as its history shows it: from one fired
// poll timer to the next.
type pollCycle struct {
	Events int     // events of the cycle, the first fired timer included
	Period float64 // seconds between the two timers firing
}

// reconcileCycles reads the history of a run after event ID from, newest
// first so that the older part is never fetched, and returns every
// complete poll cycle in it.
func (e *Env) reconcileCycles(ctx context.Context, name, runID string, from int64) ([]pollCycle, error) {
	var fired []*historypb.HistoryEvent // newest first
	var seen int
	var token []byte
	for done := false; !done; {
		resp, err := e.Temporal.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
			Namespace:       e.Stack.Namespace,
			Execution:       &commonpb.WorkflowExecution{WorkflowId: contract.WorkflowID(name), RunId: runID},
			MaximumPageSize: 200,
			NextPageToken:   token,
		})
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", name, err)
		}
		for _, ev := range resp.GetHistory().GetEvents() {
			if ev.GetEventId() <= from {
				done = true
				break
			}
			seen++
			if ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_FIRED {
				fired = append(fired, ev)
			}
		}
		token = resp.GetNextPageToken()
		done = done || len(token) == 0
	}
	var cycles []pollCycle
	for i := len(fired) - 1; i > 0; i-- {
		a, b := fired[i], fired[i-1]
		cycles = append(cycles, pollCycle{
			Events: int(b.GetEventId() - a.GetEventId()),
			Period: b.GetEventTime().AsTime().Sub(a.GetEventTime().AsTime()).Seconds(),
		})
	}
	return cycles, nil
}

// countApps counts the running apps whose search attributes match where
// (a visibility query over Ferry's search attributes).
func (e *Env) countApps(ctx context.Context, where string) (int64, error) {
	resp, err := e.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Namespace: e.Stack.Namespace,
		Query:     fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s", contract.ApplicationWorkflow, where),
	})
	if err != nil {
		return 0, err
	}
	return resp.GetCount(), nil
}

// activitySpan is one activity of an app's history: when it was scheduled,
// when a worker started it and when it closed, and on which queue.
type activitySpan struct {
	Queue                      string
	Scheduled, Started, Closed time.Time
}

// activitySpans lists the activities of one type in the app's runs, first
// to last (a new app's first run continues as new once it has synced).
func (e *Env) activitySpans(ctx context.Context, name, activityType string) ([]activitySpan, error) {
	var out []*activitySpan
	byID := map[int64]*activitySpan{} // of the run read: event IDs begin again with each
	err := ferryclient.EachEvent(ctx, e.Temporal, contract.WorkflowID(name), func(ev *historypb.HistoryEvent) error {
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			clear(byID)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			if a.GetActivityType().GetName() == activityType {
				byID[ev.GetEventId()] = &activitySpan{Queue: a.GetTaskQueue().GetName(), Scheduled: at}
				out = append(out, byID[ev.GetEventId()])
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if s := byID[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]; s != nil {
				s.Started = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if s := byID[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]; s != nil {
				s.Closed = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			if s := byID[ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()]; s != nil {
				s.Closed = at
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", name, err)
	}
	spans := make([]activitySpan, 0, len(out))
	for _, s := range out {
		spans = append(spans, *s)
	}
	return spans, nil
}

// appStartTimes returns when the workflow of every running app started,
// by app name, from the visibility store.
func (e *Env) appStartTimes(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	var token []byte
	for {
		resp, err := e.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.Stack.Namespace, PageSize: 1000, NextPageToken: token,
			Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", contract.ApplicationWorkflow),
		})
		if err != nil {
			return nil, fmt.Errorf("list the apps: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			if name, ok := strings.CutPrefix(ex.GetExecution().GetWorkflowId(), contract.WorkflowID("")); ok {
				out[name] = ex.GetStartTime().AsTime()
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}

// appNames lists the running apps whose search attributes match where.
func (e *Env) appNames(ctx context.Context, where string) ([]string, error) {
	var out []string
	var token []byte
	for {
		resp, err := e.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.Stack.Namespace, PageSize: 1000, NextPageToken: token,
			Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s", contract.ApplicationWorkflow, where),
		})
		if err != nil {
			return nil, fmt.Errorf("list the apps: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			if name, ok := strings.CutPrefix(ex.GetExecution().GetWorkflowId(), contract.WorkflowID("")); ok {
				out = append(out, name)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}

// statusUpserted answers when the app's workflow first set its sync status
// search attribute (contract.SearchSync) to want after event from of run
// (the mark a runLength took; a later run is read from its start): the
// time of the WorkflowTaskCompleted event that carried the
// UpsertWorkflowSearchAttributes command, the moment the visibility store
// can see the new status.
func (e *Env) statusUpserted(ctx context.Context, name string, mark runLength, want string) (time.Time, error) {
	it := e.Temporal.GetWorkflowHistory(ctx, contract.WorkflowID(name), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	now, err := e.runLength(ctx, name)
	if err != nil {
		return time.Time{}, err
	}
	from := mark.Events
	if now.RunID != mark.RunID {
		from = 0
	}
	completed := map[int64]time.Time{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return time.Time{}, fmt.Errorf("history of %s: %w", name, err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			completed[ev.GetEventId()] = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			if ev.GetEventId() <= from {
				continue
			}
			a := ev.GetUpsertWorkflowSearchAttributesEventAttributes()
			p := a.GetSearchAttributes().GetIndexedFields()[contract.SearchSync]
			var got string
			if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &got) != nil || got != want {
				continue
			}
			if at, ok := completed[a.GetWorkflowTaskCompletedEventId()]; ok {
				return at, nil
			}
			return ev.GetEventTime().AsTime(), nil
		}
	}
	return time.Time{}, fmt.Errorf("app %s: no upsert of %s = %s after event %d", name, contract.SearchSync, want, from)
}
