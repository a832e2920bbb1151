package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"
)

type sliceHistory struct{ events []*historypb.HistoryEvent }

func (h *sliceHistory) HasNext() bool { return len(h.events) > 0 }
func (h *sliceHistory) Next() (*historypb.HistoryEvent, error) {
	ev := h.events[0]
	h.events = h.events[1:]
	return ev, nil
}

// A history as a new app's first reconcile writes it: the breakdown sums
// each step's time and stops at the upsert showing Synced and Healthy.
func TestTraceOnboarding(t *testing.T) {
	var events []*historypb.HistoryEvent
	add := eventAdder(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), &events)
	wft := func(scheduled, started, completed int) {
		add(scheduled, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil)
		s := int64(len(events))
		add(started, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: s}}
		})
		st := int64(len(events))
		add(completed, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{StartedEventId: st}}
		})
	}
	activity := func(name string, scheduled, started, completed int) {
		add(scheduled, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: name}}}
		})
		s := int64(len(events))
		add(started, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: s}}
		})
		st := int64(len(events))
		add(completed, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{StartedEventId: st}}
		})
	}
	upsert := func(ms int, fields map[string]string) {
		indexed := map[string]*commonpb.Payload{}
		for k, v := range fields {
			p, err := converter.GetDefaultDataConverter().ToPayload(v)
			if err != nil {
				t.Fatal(err)
			}
			indexed[k] = p
		}
		add(ms, enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_UpsertWorkflowSearchAttributesEventAttributes{UpsertWorkflowSearchAttributesEventAttributes: &historypb.UpsertWorkflowSearchAttributesEventAttributes{
				SearchAttributes: &commonpb.SearchAttributes{IndexedFields: indexed}}}
		})
	}
	add(0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, nil)
	wft(0, 300, 500) // waited 300 ms, ran 200 ms with the resolve in it
	add(500, enumspb.EVENT_TYPE_MARKER_RECORDED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{MarkerName: "LocalActivity"}}
	})
	activity(contract.ActivityRender, 500, 600, 1600)
	wft(1600, 1700, 1750)
	upsert(1750, map[string]string{contract.SearchSync: "OutOfSync", contract.SearchHealth: "Missing"})
	activity(contract.ActivitySync, 1750, 2750, 3000)
	wft(3000, 3100, 3150)
	upsert(3150, map[string]string{contract.SearchSync: "Synced", contract.SearchHealth: "Progressing"})
	add(3150, enumspb.EVENT_TYPE_TIMER_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{TimerId: "1"}}
	})
	add(8150, enumspb.EVENT_TYPE_TIMER_FIRED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_TimerFiredEventAttributes{TimerFiredEventAttributes: &historypb.TimerFiredEventAttributes{TimerId: "1"}}
	})
	wft(8150, 8200, 8300)
	upsert(8300, map[string]string{contract.SearchHealth: "Healthy"})
	wft(9000, 9100, 9200) // after Healthy: not counted
	tr, err := traceOnboarding(&sliceHistory{events: events})
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int { return int(d / time.Millisecond) }
	if tr.Tasks != 4 {
		t.Errorf("%d workflow tasks; want the 4 before the Healthy upsert", tr.Tasks)
	}
	if ms(tr.Total) != 8300 || tr.Events != 25 {
		t.Errorf("total %v, events %d; want 8.3s to the Healthy upsert, event 25", tr.Total, tr.Events)
	}
	for step, want := range map[onboardStep]int{
		stepWFTWait:                           300 + 100 + 100 + 50,
		stepWFTLocal:                          200,
		stepWFTRun:                            50 + 50 + 100,
		activityWait(contract.ActivityRender): 100,
		activityRun(contract.ActivityRender):  1000,
		activityWait(contract.ActivitySync):   1000,
		activityRun(contract.ActivitySync):    250,
		stepTimer:                             5000,
		stepSyncToHeal:                        8300 - 3000,
	} {
		if got := ms(tr.Steps[step]); got != want {
			t.Errorf("%s: %d ms, want %d", step, got, want)
		}
	}
	if _, err := traceOnboarding(&sliceHistory{events: events[:10]}); err == nil {
		t.Error("a history that never shows Synced and Healthy: no error")
	}
}

// An activity redone after its heartbeat timed out while it ran counts as
// retried and timed out; one retried after an error only as retried.
func TestTraceCountsTimeoutsWhileRunning(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var events []*historypb.HistoryEvent
	add := func(typ enumspb.EventType, attrs any) {
		ev := &historypb.HistoryEvent{EventId: int64(len(events) + 1), EventType: typ, EventTime: timestamppb.New(t0.Add(time.Duration(len(events)) * time.Second))}
		switch a := attrs.(type) {
		case *historypb.ActivityTaskScheduledEventAttributes:
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: a}
		case *historypb.ActivityTaskStartedEventAttributes:
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: a}
		case *historypb.ActivityTaskCompletedEventAttributes:
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: a}
		case *historypb.UpsertWorkflowSearchAttributesEventAttributes:
			ev.Attributes = &historypb.HistoryEvent_UpsertWorkflowSearchAttributesEventAttributes{UpsertWorkflowSearchAttributesEventAttributes: a}
		}
		events = append(events, ev)
	}
	timeout := func(typ enumspb.TimeoutType) *failurepb.Failure {
		beat, err := converter.GetDefaultDataConverter().ToPayloads("applied 3 of 10")
		if err != nil {
			t.Fatal(err)
		}
		return &failurepb.Failure{FailureInfo: &failurepb.Failure_TimeoutFailureInfo{TimeoutFailureInfo: &failurepb.TimeoutFailureInfo{TimeoutType: typ, LastHeartbeatDetails: beat}}}
	}
	run := func(attempt int32, last *failurepb.Failure) {
		add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: contract.ActivitySync}})
		s := int64(len(events))
		add(enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: s, Attempt: attempt, LastFailure: last})
		add(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, &historypb.ActivityTaskCompletedEventAttributes{StartedEventId: s + 1})
	}
	add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, nil)
	run(3, timeout(enumspb.TIMEOUT_TYPE_HEARTBEAT))
	run(2, &failurepb.Failure{Message: "connection refused"})
	run(2, timeout(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START))
	indexed := syncedHealthyAttributes(t)
	add(enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, &historypb.UpsertWorkflowSearchAttributesEventAttributes{SearchAttributes: &commonpb.SearchAttributes{IndexedFields: indexed}})
	tr, err := traceOnboarding(&sliceHistory{events: events})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`Sync, heartbeat timeout, last heartbeat "applied 3 of 10"`}
	if tr.Retried != 3 || !slices.Equal(tr.TimedOut, want) {
		t.Errorf("retried %d, timed out while running %q; want 3 and %q", tr.Retried, tr.TimedOut, want)
	}
}

// A new app's wait at the onboarding gate is the time from its turn's
// timer to the signal that its turn came.
func TestTraceCountsTheTurnAtTheGate(t *testing.T) {
	var events []*historypb.HistoryEvent
	add := eventAdder(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), &events)
	add(0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, nil)
	add(200, enumspb.EVENT_TYPE_TIMER_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{TimerId: "turn"}}
	})
	add(7200, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{SignalName: contract.SignalOnboardGo}}
	})
	indexed := syncedHealthyAttributes(t)
	add(8000, enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_UpsertWorkflowSearchAttributesEventAttributes{UpsertWorkflowSearchAttributesEventAttributes: &historypb.UpsertWorkflowSearchAttributesEventAttributes{
			SearchAttributes: &commonpb.SearchAttributes{IndexedFields: indexed}}}
	})
	tr, err := traceOnboarding(&sliceHistory{events: events})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Steps[stepTurn]; got != 7*time.Second {
		t.Errorf("turn: %v, want 7s", got)
	}
}

// eventAdder appends to *events an event of type typ, ms after t0, its
// attributes set by set (nil: none).
func eventAdder(t0 time.Time, events *[]*historypb.HistoryEvent) func(ms int, typ enumspb.EventType, set func(*historypb.HistoryEvent)) {
	return func(ms int, typ enumspb.EventType, set func(*historypb.HistoryEvent)) {
		ev := &historypb.HistoryEvent{EventId: int64(len(*events) + 1), EventType: typ, EventTime: timestamppb.New(t0.Add(time.Duration(ms) * time.Millisecond))}
		if set != nil {
			set(ev)
		}
		*events = append(*events, ev)
	}
}

// syncedHealthyAttributes are the search attributes of an upsert that shows an
// app Synced and Healthy.
func syncedHealthyAttributes(t *testing.T) map[string]*commonpb.Payload {
	t.Helper()
	indexed := map[string]*commonpb.Payload{}
	for k, v := range map[string]string{contract.SearchSync: "Synced", contract.SearchHealth: "Healthy"} {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		indexed[k] = p
	}
	return indexed
}
