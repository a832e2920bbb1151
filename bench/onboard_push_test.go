package bench

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/ferry-gitops/ferry/contract"
)

func TestPushProbeFigureIsBesideTheIdleStack(t *testing.T) {
	p := &pushProbe{w: &Worker{Webhook: true}, idle: []float64{0.4, 0.5, 0.6}, next: probeTenths}
	p.pushDuring(t.Context(), 9, 100) // not a tenth yet
	assert.Nil(t, p.inflight)

	p.busy = []probeResult{{took: 0.75}, {took: 1.5}, {err: errors.New("timed out")}, {took: 0.25}}
	f := p.figure(100, "")
	assert.Equal(t, []float64{0.75, 1.5, 0.25}, f.Samples)
	assert.Contains(t, f.What, "when 1, 3, 5, 7, 9 tenths of the 100 new apps")
	assert.Contains(t, f.What, "The median of 3 over the idle stack's: 1.50×")
	assert.Contains(t, f.What, "1 not measured; the first: timed out.")
	assert.Contains(t, f.What, "webhook")

	never := (&pushProbe{w: &Worker{}, idle: []float64{0.5}}).figure(100, "")
	assert.Empty(t, never.Samples)
	assert.Contains(t, never.What, "not measured; the first: a tenth of the fleet was never Synced")
}

// One push at a time, at each tenth of probeTenths; tenths passed while a
// push was under way are skipped.
func TestPushProbePushesAtItsTenths(t *testing.T) {
	p := &pushProbe{next: probeTenths}
	assert.False(t, p.due(5, 100))
	assert.True(t, p.due(12, 100))
	assert.Equal(t, []int{3, 5, 7, 9}, p.next)
	assert.True(t, p.due(55, 100)) // 3 and 5 passed during the first push: one push
	assert.Equal(t, []int{7, 9}, p.next)

	p.inflight = make(chan probeResult, 1)
	p.pushDuring(t.Context(), 95, 100) // under way: no second push
	assert.Equal(t, []int{7, 9}, p.next)
	p.inflight <- probeResult{took: 2}
	p.collect(false)
	assert.Nil(t, p.inflight)
	assert.Equal(t, []probeResult{{took: 2}}, p.busy)
}

// The push's steps are those of its window of the app's history: a step
// that began before the push counts from the push on, one after the app
// showed it Synced not at all.
func TestPushStepsAreThoseOfItsWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var events []*historypb.HistoryEvent
	add := eventAdder(t0, &events)
	add(0, enumspb.EVENT_TYPE_TIMER_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{TimerId: "poll"}}
	})
	add(9000, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil) // waits across the push at 10 s
	add(10200, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{SignalName: contract.SignalRefresh}}
	})
	add(10400, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: 2}}
	})
	add(10500, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{StartedEventId: 4}}
	})
	add(10500, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: contract.ActivitySync}}}
	})
	add(11500, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: 6}}
	})
	add(12000, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{StartedEventId: 7}}
	})
	add(20000, enumspb.EVENT_TYPE_TIMER_FIRED, func(ev *historypb.HistoryEvent) { // after the window
		ev.Attributes = &historypb.HistoryEvent_TimerFiredEventAttributes{TimerFiredEventAttributes: &historypb.TimerFiredEventAttributes{TimerId: "poll"}}
	})
	steps, err := windowSteps(&sliceHistory{events: events}, t0.Add(10*time.Second), t0.Add(12500*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, []breakdownStep{
		{Step: string(activityWait(contract.ActivitySync)), Mean: 1, Share: 40},
		{Step: string(activityRun(contract.ActivitySync)), Mean: 0.5, Share: 20},
		{Step: string(stepStatusRead), Mean: 0.5, Share: 20},
		{Step: string(stepWFTWait), Mean: 0.4, Share: 16},
		{Step: string(stepPushReach), Mean: 0.2, Share: 8},
		{Step: string(stepWFTRun), Mean: 0.1, Share: 4},
	}, roundSteps(steps))

	p := &pushProbe{w: &Worker{Webhook: true}, idle: []float64{1}, busy: []probeResult{{took: 2.5, steps: steps}}}
	assert.Contains(t, p.figure(100, "").What, "Where a push went, the mean of their histories: Sync: waiting for a poller/slot 1.00 s;")
}

// roundSteps rounds what float arithmetic on durations leaves.
func roundSteps(steps []breakdownStep) []breakdownStep {
	for i := range steps {
		steps[i].Mean = math.Round(steps[i].Mean*1000) / 1000
		steps[i].Share = math.Round(steps[i].Share*1000) / 1000
	}
	return steps
}
