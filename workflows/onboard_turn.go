package workflows

import (
	"cmp"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// versionOnboardGate marks the runs whose new apps wait for their turn at
// the onboarding gate (onboard_gate.go) before their first reconcile,
// when the worker bounds onboarding (--onboard-concurrency).
const versionOnboardGate = "onboard-gate"

// onboardWait bounds a new app's wait for its turn: a gate that does not
// answer slows the onboarding down, never stops it. On the runs with
// changeOnboardRecheck, the wait is the worker's --onboard-wait, and one
// that ends asks the gate again (OnboardRequest.Recheck): the app waits
// once more while the gate makes progress, since a queue longer than the
// wait is not a gate that does not answer. (Before, every app still queued
// after 30 minutes of a mass onboarding left the queue at once: at 5,000
// apps on two cores, about 2,000 of them, and the onboarding rate fell from
// about 2.1 apps a second to 0.6.)
const onboardWait = contract.DefaultOnboardWait

const changeOnboardRecheck = "onboard-recheck"

// spreadWait is a new app's wait for its turn on the runs with
// changeOnboardRecheck: wait, and up to half as long again, drawn from the
// app's name (app.Jitter). The apps of a mass onboarding, applied within a
// minute or two, would otherwise end their waits in the same minute and
// ask the gate again together: at 5,000 apps on two cores about 2,000 did,
// and on the starved machine the region's readiness probe timed out
// (bench/README.md, "A third run"). The SideEffect that reads it records
// it, so a run replays with the wait it had.
func spreadWait(name string, wait time.Duration) time.Duration {
	return wait + app.Jitter(name, 5*wait)
}

// onboardTurn is a new app's place at the gate.
type onboardTurn struct {
	// asked: decided for this run (whether to ask, and asked if so);
	// gated: the app asked the gate; done: it said so again, leaving;
	// waiting: for its turn now, at a gate of capacity apps.
	asked, gated, done, waiting bool
	// frees: this run gives its place back while its first sync waits
	// (changeOnboardFreesWaiting), decided once.
	frees, freesDecided bool
	capacity            int
	since               time.Time
	// said is the signal that told the gate the app left (done).
	said workflow.Future
}

// conditionOnboardingQueued is Ferry's condition of a new app waiting for
// its turn to onboard. Only the status query shows it (statusView): the
// app's published status and its object's stay as they were.
const conditionOnboardingQueued = "OnboardingQueued"

// queuedCondition says why a new app shows Unknown while it waits.
func (t *onboardTurn) queuedCondition() app.Condition {
	return app.Condition{Type: conditionOnboardingQueued, At: t.since, Message: fmt.Sprintf(
		"waiting for its turn to onboard: new apps take their first sync %d at a time, in the order they came (the worker's --onboard-concurrency); a sync or a delete of this app goes at once",
		t.capacity)}
}

// awaitOnboardTurn makes a new app, before its first reconcile, ask the
// gate for a place and wait for it. A user's sync or a delete ends the
// wait: it goes first, and the app leaves the queue. It reports whether
// the reconcile runs now (false: the loop serves what ended the wait).
func (s *appState) awaitOnboardTurn(ctx workflow.Context) bool {
	t := &s.onboardTurn
	if t.asked || !s.isNew() {
		return true
	}
	t.asked = true
	if changeVersion(ctx, versionOnboardGate) == workflow.DefaultVersion {
		return true
	}
	var capacity int
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return s.cfg.OnboardConcurrency }).Get(&capacity); err != nil || capacity <= 0 {
		return true
	}
	want := contract.OnboardRequest{App: workflow.GetInfo(ctx).WorkflowExecution.ID, Capacity: capacity}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: resolveTimeout, RetryPolicy: activityRetry(5), Summary: "Ask for a turn to onboard",
	})
	if err := workflow.ExecuteLocalActivity(lctx, contract.ActivityOnboardWant, want).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("onboarding gate: cannot ask for a turn; onboarding now", "error", err)
		return true
	}
	t.gated = true
	admitted := false
	turns := workflow.GetSignalChannel(ctx, contract.SignalOnboardGo)
	workflow.Go(ctx, func(ctx workflow.Context) {
		turns.Receive(ctx, nil)
		admitted = true
	})
	wait := workflow.AwaitOptions{Timeout: onboardWait, TimerOptions: workflow.TimerOptions{Summary: timerOnboardTurn}}
	recheck := changeVersion(ctx, changeOnboardRecheck) != workflow.DefaultVersion
	if recheck {
		name := s.app.Metadata.Name
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return spreadWait(name, cmp.Or(s.cfg.OnboardWait, onboardWait)) }).Get(&wait.Timeout); err != nil {
			return true
		}
	}
	t.waiting, t.capacity, t.since = true, capacity, workflow.Now(ctx)
	defer func() { t.waiting = false }()
	for {
		if _, err := await(ctx, wait, func() bool { return admitted || !s.idle() }); err != nil {
			return true
		}
		if admitted {
			return true
		}
		if !recheck || !s.idle() || !gateAnswers(ctx, lctx, want) {
			s.onboardDone(ctx) // the queue is left
			return s.idle()    // waited out: onboard now
		}
	}
}

// gateAnswers asks the gate again after a wait that ended without a turn:
// true when it makes progress (the app keeps or gets back its place).
func gateAnswers(ctx, lctx workflow.Context, want contract.OnboardRequest) bool {
	want.Recheck = true
	if err := workflow.ExecuteLocalActivity(lctx, contract.ActivityOnboardWant, want).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("onboarding gate: no progress; onboarding now", "error", err)
		return false
	}
	return true
}

// onboardDone tells the gate the app's first reconcile ended, or that it
// waits no longer; once.
func (s *appState) onboardDone(ctx workflow.Context) {
	t := &s.onboardTurn
	if !t.gated || t.done {
		return
	}
	t.done = true
	done := contract.OnboardRequest{App: workflow.GetInfo(ctx).WorkflowExecution.ID}
	// Not awaited here: a gate that is gone has no place to free. A run
	// on the onboarding queue waits for it before it continues as new
	// (awaitGateTold).
	t.said = workflow.SignalExternalWorkflow(ctx, contract.OnboardGateID, "", contract.SignalOnboardDone, done)
}

// changeOnboardFreesWaiting: a new app gives its place at the gate back
// the first time its first sync waits rather than writes: the region's
// activity, as a wave waits for health or a hook runs (its input's
// OnboardPlace), the app itself before a retry's wait. Before, it held the
// place for its whole first sync, and a few apps waiting minutes for
// their waves held a low --onboard-concurrency shut.
const changeOnboardFreesWaiting = "onboard-frees-waiting"

// onboardPlace is the app's place at the gate for a region's run to give
// back when it waits (contract.SyncInput.OnboardPlace): its workflow ID
// while it holds one, else "".
func (s *appState) onboardPlace(ctx workflow.Context) string {
	t := &s.onboardTurn
	if !t.gated || t.done {
		return ""
	}
	if !t.freesDecided {
		t.freesDecided = true
		t.frees = changeVersion(ctx, changeOnboardFreesWaiting) != workflow.DefaultVersion
	}
	if !t.frees {
		return ""
	}
	return workflow.GetInfo(ctx).WorkflowExecution.ID
}

// onboardWaits gives the app's place back as its first sync waits to
// retry.
func (s *appState) onboardWaits(ctx workflow.Context) {
	if s.onboardPlace(ctx) != "" {
		s.onboardDone(ctx)
	}
}
