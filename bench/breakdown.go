package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// onboardStep is where an app's onboarding time goes, as its history shows
// it: one column of the breakdown.
type onboardStep string

const (
	stepWFTWait    onboardStep = "workflow task: waiting for the worker"
	stepWFTRun     onboardStep = "workflow task: run by the worker"
	stepWFTLocal   onboardStep = "workflow task with ResolveRevision in it (a local activity: Git ls-remote): run"
	stepTimer      onboardStep = "timers (settle poll: health wait)"
	stepSyncToHeal onboardStep = "health wait: first Sync closed to Healthy"
	stepTurn       onboardStep = "waiting for its turn (the onboarding gate)"
)

// activityWait and activityRun name an activity's two columns: waiting for
// a poller or slot (schedule-to-start) and running (start-to-close).
func activityWait(t string) onboardStep { return onboardStep(t + ": waiting for a poller/slot") }
func activityRun(t string) onboardStep  { return onboardStep(t + ": run") }

// onboardTrace is one app's onboarding from its history: from the
// workflow's start to the search-attribute upsert that first showed it
// Synced and Healthy (what the fleet's count waits for).
type onboardTrace struct {
	Start  time.Time
	Total  time.Duration
	Events int64
	// Tasks counts the workflow tasks that ran (completed, failed or
	// timed out) until then.
	Tasks int64
	Steps map[onboardStep]time.Duration
	// Retried counts the activities that took more than one attempt (a
	// history shows an activity's last attempt, and the failure of the one
	// before); TimedOut describes those whose attempt before, or whose
	// last, timed out while it ran (its heartbeat or its start-to-close):
	// work a worker redoes from the start (timeoutOf).
	Retried  int
	TimedOut []string
	// FailedTasks are the causes of its workflow tasks that failed
	// ("UnhandledCommand"): each is run again from a replay of the run.
	FailedTasks []string
	// TimedOutAt are the times of the events that showed them (the next
	// attempt's start, or the timeout), and App the app, so that a
	// timeout can be found in the worker's log.
	TimedOutAt []time.Time
	App        string
}

// onboardHistory reads an app's runs from its start until it was first
// Synced and Healthy (its first run continues as new once it onboarded,
// and may do so before its health arrives), and sums the time of each
// step. Steps may overlap (parallel regions), so their shares need not add
// up to the whole.
func (e *Env) onboardHistory(ctx context.Context, name string) (*onboardTrace, error) {
	var evs eventList
	err := ferryclient.EachEvent(ctx, e.Temporal, contract.WorkflowID(name), func(ev *historypb.HistoryEvent) error {
		evs = append(evs, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	tr, err := traceOnboarding(&evs)
	if err != nil {
		return nil, fmt.Errorf("app %s: %w", name, err)
	}
	tr.App = name
	return tr, nil
}

// historyIterator is what client.Client.GetWorkflowHistory returns.
type historyIterator interface {
	HasNext() bool
	Next() (*historypb.HistoryEvent, error)
}

// eventList is a historyIterator over events read already.
type eventList []*historypb.HistoryEvent

func (l *eventList) HasNext() bool { return len(*l) > 0 }

func (l *eventList) Next() (*historypb.HistoryEvent, error) {
	ev := (*l)[0]
	*l = (*l)[1:]
	return ev, nil
}

// traceOnboarding reads a history until the upsert that first shows the
// app Synced and Healthy.
func traceOnboarding(it historyIterator) (*onboardTrace, error) {
	c := newStepClock(time.Time{})
	var began, firstSyncClosed time.Time
	var lastTimer time.Time
	attrs := map[string]string{}
	dc := converter.GetDefaultDataConverter()
	events := 0 // of every run so far: event IDs begin again with each
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		events++
		at := ev.GetEventTime().AsTime()
		if closed := c.event(ev); closed == contract.ActivitySync && firstSyncClosed.IsZero() {
			firstSyncClosed = at
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			if began.IsZero() { // the first run's start, not a continue-as-new's
				began = at
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			lastTimer = at
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			// The turn's wait is the one timer of a new app before its turn.
			if ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == contract.SignalOnboardGo && !lastTimer.IsZero() {
				c.steps[stepTurn] += at.Sub(lastTimer)
			}
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			for k, p := range ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields() {
				var v string
				if dc.FromPayload(p, &v) == nil {
					attrs[k] = v
				}
			}
			if attrs[contract.SearchSync] == string(app.SyncStatusSynced) && attrs[contract.SearchHealth] == string(app.HealthHealthy) {
				tr := &onboardTrace{Start: began, Total: at.Sub(began), Events: int64(events), Tasks: c.tasks,
					Steps: c.steps, Retried: c.retried, TimedOut: c.timedOut, TimedOutAt: c.timedOutAt, FailedTasks: c.failedTasks}
				if !firstSyncClosed.IsZero() {
					tr.Steps[stepSyncToHeal] = at.Sub(firstSyncClosed)
				}
				return tr, nil
			}
		}
	}
	return nil, fmt.Errorf("its history never showed it Synced and Healthy")
}

// stepClock sums the time of each step of a history, event by event: a
// workflow task's wait and run, an activity's wait and run, a timer. A
// step counts from from on (the push probe's window of a history; zero:
// from the start).
type stepClock struct {
	from       time.Time
	steps      map[onboardStep]time.Duration
	tasks      int64
	retried    int
	timedOut   []string
	timedOutAt []time.Time
	// failedTasks are the causes of the workflow tasks that failed.
	failedTasks []string
	// opened are the activity and workflow task events that opened a step
	// (scheduled, started), by event ID; actType their activity's type.
	opened  map[int64]*historypb.HistoryEvent
	actType map[int64]string
	timers  map[string]time.Time
	// lastRun is the run of the last workflow task, until a local
	// activity's marker after it moves it to stepWFTLocal.
	lastRun time.Duration
}

func newStepClock(from time.Time) *stepClock {
	return &stepClock{from: from, steps: map[onboardStep]time.Duration{}, opened: map[int64]*historypb.HistoryEvent{},
		actType: map[int64]string{}, timers: map[string]time.Time{}}
}

// event counts ev; it returns the type of the activity ev closed, if any.
func (c *stepClock) event(ev *historypb.HistoryEvent) (closed string) {
	at := ev.GetEventTime().AsTime()
	counted := !at.Before(c.from)
	since := func(t time.Time) time.Duration {
		if !counted || t.IsZero() {
			return 0
		}
		if t.Before(c.from) {
			t = c.from
		}
		return at.Sub(t)
	}
	sinceID := func(id int64) time.Duration {
		if o := c.opened[id]; o != nil {
			return since(o.GetEventTime().AsTime())
		}
		return 0
	}
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		c.opened[ev.GetEventId()] = ev
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			c.actType[ev.GetEventId()] = a.GetActivityType().GetName()
		}
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
		c.opened[ev.GetEventId()] = ev
		c.steps[stepWFTWait] += sinceID(ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId())
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
		var started int64
		switch {
		case ev.GetWorkflowTaskCompletedEventAttributes() != nil:
			started = ev.GetWorkflowTaskCompletedEventAttributes().GetStartedEventId()
		case ev.GetWorkflowTaskFailedEventAttributes() != nil:
			started = ev.GetWorkflowTaskFailedEventAttributes().GetStartedEventId()
		default:
			started = ev.GetWorkflowTaskTimedOutEventAttributes().GetStartedEventId()
		}
		if f := ev.GetWorkflowTaskFailedEventAttributes(); f != nil && counted {
			c.failedTasks = append(c.failedTasks, f.GetCause().String())
		}
		c.lastRun = sinceID(started)
		c.steps[stepWFTRun] += c.lastRun
		if counted {
			c.tasks++
		}
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" && c.lastRun > 0 {
			c.steps[stepWFTRun] -= c.lastRun
			c.steps[stepWFTLocal] += c.lastRun
			c.lastRun = 0
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
		a := ev.GetActivityTaskStartedEventAttributes()
		c.opened[ev.GetEventId()] = ev
		c.actType[ev.GetEventId()] = c.actType[a.GetScheduledEventId()]
		c.steps[activityWait(c.actType[a.GetScheduledEventId()])] += sinceID(a.GetScheduledEventId())
		if a.GetAttempt() > 1 && counted {
			c.retried++
			if timedOutRunning(a.GetLastFailure()) {
				c.timedOut = append(c.timedOut, timeoutOf(c.actType[a.GetScheduledEventId()], a.GetLastFailure()))
				c.timedOutAt = append(c.timedOutAt, at)
			}
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		var started int64
		switch {
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			started = ev.GetActivityTaskCompletedEventAttributes().GetStartedEventId()
		case ev.GetActivityTaskFailedEventAttributes() != nil:
			started = ev.GetActivityTaskFailedEventAttributes().GetStartedEventId()
		default:
			started = ev.GetActivityTaskTimedOutEventAttributes().GetStartedEventId()
			if f := ev.GetActivityTaskTimedOutEventAttributes().GetFailure(); timedOutRunning(f) && counted {
				c.timedOut = append(c.timedOut, timeoutOf(c.actType[started], f))
				c.timedOutAt = append(c.timedOutAt, at)
			}
		}
		c.steps[activityRun(c.actType[started])] += sinceID(started)
		return c.actType[started]
	case enumspb.EVENT_TYPE_TIMER_STARTED:
		c.timers[ev.GetTimerStartedEventAttributes().GetTimerId()] = at
	case enumspb.EVENT_TYPE_TIMER_FIRED:
		c.steps[stepTimer] += since(c.timers[ev.GetTimerFiredEventAttributes().GetTimerId()])
	}
	return ""
}

// maxTraced bounds the histories the breakdown reads: evenly spread over
// the fleet, so that reading them does not take longer than the onboarding.
const maxTraced = 250

// onboardBreakdown reads the histories of up to maxTraced of the apps and
// writes the breakdown table: for each step, its mean seconds per app and
// its share of the app's onboarding, and the events it cost.
func (e *Env) onboardBreakdown(ctx context.Context, names []string) (string, []*onboardTrace, error) {
	pick := names
	if len(names) > maxTraced {
		pick = nil
		for i := range maxTraced {
			pick = append(pick, names[i*len(names)/maxTraced])
		}
	}
	var mu sync.Mutex
	var traces []*onboardTrace
	var failed []string
	err := e.forApps(ctx, pick, func(ctx context.Context, name string) error {
		tr, err := e.onboardHistory(ctx, name)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed = append(failed, err.Error())
			return nil
		}
		traces = append(traces, tr)
		return nil
	})
	if err != nil || len(traces) == 0 {
		return "", nil, errJoinFirst(err, failed)
	}
	var total float64
	var retried int
	var timedOut, timedOutApps, failedTasks []string
	var events, tasks []float64
	sums := map[onboardStep]float64{}
	for _, tr := range traces {
		retried, timedOut = retried+tr.Retried, append(timedOut, tr.TimedOut...)
		failedTasks = append(failedTasks, tr.FailedTasks...)
		for _, at := range tr.TimedOutAt {
			timedOutApps = append(timedOutApps, fmt.Sprintf("%s at %s", tr.App, at.UTC().Format("15:04:05")))
		}
		total += tr.Total.Seconds()
		events = append(events, float64(tr.Events))
		tasks = append(tasks, float64(tr.Tasks))
		for s, d := range tr.Steps {
			sums[s] += d.Seconds()
		}
	}
	n := float64(len(traces))
	d := breakdownText{Traced: len(traces), Max: maxTraced, Mean: total / n,
		EventsMean: Summarize(events).Mean, EventsMedian: Summarize(events).Median, EventsMax: Summarize(events).Max,
		TasksMean: Summarize(tasks).Mean, TasksMedian: Summarize(tasks).Median, TasksMax: Summarize(tasks).Max, Failed: len(failed),
		Retried: retried, TimedOut: len(timedOut), Timeouts: tally(timedOut), TimedOutApps: timedOutApps, Steps: breakdownRows(sums, n, total),
		FailedTasks: len(failedTasks), FailCauses: tally(failedTasks)}
	if len(failed) > 0 {
		d.FirstFailure = failed[0]
	}
	return say(d, "text"), traces, nil
}

// breakdownText is the data of text/breakdown.md.tmpl: Traced histories
// read (at most Max), their mean time to Synced and Healthy, their events
// and workflow tasks, the steps, and the histories that Failed.
type breakdownText struct {
	Traced, Max, Failed                 int
	Retried, TimedOut, FailedTasks      int
	Timeouts, TimedOutApps, FailCauses  []string
	Mean                                float64
	EventsMean, EventsMedian, EventsMax float64
	TasksMean, TasksMedian, TasksMax    float64
	Steps                               []breakdownStep
	FirstFailure                        string
}

// breakdownStep is a row: a step's mean seconds per app and its share (%)
// of the app's onboarding.
type breakdownStep struct {
	Step        string
	Mean, Share float64
}

func (breakdownText) textFile() string { return "breakdown" }

// breakdownRows are the rows of sums (seconds of n traces, of total
// seconds in all), the longest first.
func breakdownRows(sums map[onboardStep]float64, n, total float64) []breakdownStep {
	var rows []breakdownStep
	for s, sum := range sums {
		if sum > 0 {
			rows = append(rows, breakdownStep{Step: string(s), Mean: sum / n, Share: 100 * sum / total})
		}
	}
	slices.SortFunc(rows, func(a, b breakdownStep) int {
		if c := cmp.Compare(b.Mean, a.Mean); c != 0 {
			return c
		}
		return strings.Compare(a.Step, b.Step)
	})
	return rows
}

func errJoinFirst(err error, failed []string) error {
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("no history read: %s", failed[0])
	}
	return fmt.Errorf("no app to read the history of")
}
