package bench

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
)

// probeIdlePushes is how many pushes time the probe on the idle stack.
const probeIdlePushes = 3

// probeTenths are the tenths of the fleet Synced at which the probe pushes
// during the onboarding, one push at a time: a tenth missed while the push
// before was under way is skipped.
var probeTenths = []int{1, 3, 5, 7, 9}

// pushProbe is one app, synced before a fleet onboards, that gets pushes
// while the fleet onboards: a team's fixes during a mass onboarding. Its
// pushes are timed on the idle stack first, then in the onboarding.
type pushProbe struct {
	e       *Env
	w       *Worker
	repo    *gitRepo
	name    string
	regions []string
	rev     int
	// idle are the idle stack's times; busy the onboarding's.
	idle []float64
	busy []probeResult
	// next are the tenths still to push at (probeTenths); inflight the
	// push under way.
	next     []int
	inflight chan probeResult
}

type probeResult struct {
	took  float64
	steps []breakdownStep
	err   error
}

// startPushProbe onboards the probe app on the idle stack and times its
// idle pushes.
func (e *Env) startPushProbe(ctx context.Context, w *Worker, region string) (*pushProbe, error) {
	p := &pushProbe{e: e, w: w, name: "onboard-probe", regions: []string{region}, next: probeTenths}
	var err error
	if p.repo, err = e.newRepo(ctx, p.name); err != nil {
		return nil, err
	}
	if err := p.repo.write(resourceFiles("app", pushResources, 0)); err != nil {
		return nil, err
	}
	first, err := p.repo.commitAndPush(ctx, "rev 0")
	if err != nil {
		return nil, err
	}
	spec := appSpec{Name: p.name, RepoURL: p.repo.URL, Path: "app", Namespace: p.name, Regions: p.regions, Poll: time.Hour}
	if _, err := e.applyApps(ctx, []appSpec{spec}, 1); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	_, _, err = e.waitSynced(wctx, p.name, first.SHA, p.regions, true, 200*time.Millisecond)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("the push probe: %w", err)
	}
	for range probeIdlePushes + 1 {
		took, err := p.push(ctx)
		if err != nil {
			return nil, fmt.Errorf("the push probe on the idle stack: %w", err)
		}
		p.idle = append(p.idle, took)
	}
	p.idle = p.idle[1:] // the first warms up
	return p, nil
}

// push pushes the next revision, notifies Ferry as GitHub would (or by a
// refresh when the worker has no webhook) and returns the seconds until the
// app shows it Synced.
func (p *pushProbe) push(ctx context.Context) (float64, error) {
	took, _, err := p.pushAt(ctx)
	return took, err
}

// pushAt is push, and when its clock began.
func (p *pushProbe) pushAt(ctx context.Context) (took float64, began time.Time, err error) {
	p.rev++
	c, err := p.repo.pushRev(ctx, p.rev)
	if err != nil {
		return 0, began, err
	}
	began = time.Now()
	if p.w.Webhook {
		err = deliverGitHub(ctx, p.w.WebhookAddr, p.repo, c)
	} else {
		err = p.e.Temporal.SignalWorkflow(ctx, contract.WorkflowID(p.name), "", contract.SignalRefresh, contract.RefreshRequest{})
	}
	if err != nil {
		return 0, began, err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	at, _, err := p.e.waitSynced(wctx, p.name, c.SHA, p.regions, false, statusPoll)
	if err != nil {
		return 0, began, err
	}
	return at.Sub(began).Seconds(), began, nil
}

// steps is where a push's time went: the probe's history from the push to
// the app showing it Synced.
func (p *pushProbe) steps(ctx context.Context, from, to time.Time) ([]breakdownStep, error) {
	return p.e.windowOf(ctx, p.name, from, to)
}

// windowOf is windowSteps of app name's runs, from its first.
func (e *Env) windowOf(ctx context.Context, name string, from, to time.Time) ([]breakdownStep, error) {
	var events eventList
	err := ferryclient.EachEvent(ctx, e.Temporal, contract.WorkflowID(name), func(ev *historypb.HistoryEvent) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the history of %s: %w", name, err)
	}
	return windowSteps(&events, from, to)
}

// The two ends of a window that its history's steps do not cover: the
// first is a push's, or a new app's apply.
const (
	stepPushReach  onboardStep = "the push reaching the app: from the push to its refresh signal in the history"
	stepApplyReach onboardStep = "the apply reaching Temporal: from `ferry app apply` to the workflow's start"
	stepStatusRead onboardStep = "the status read: from the history's last event to the read that saw Synced"
)

// windowSteps are the steps of a history between from and to: the parts
// of steps that began before from are left out. Its two ends are steps
// too: from from to the first refresh signal after it (or the workflow's
// start, for a window that begins with the app), and from the last event
// before to up to to.
func windowSteps(it historyIterator, from, to time.Time) ([]breakdownStep, error) {
	c := newStepClock(from)
	var signalled, started, last time.Time
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		at := ev.GetEventTime().AsTime()
		if at.After(to) {
			break
		}
		if !at.Before(from) {
			last = at
			if signalled.IsZero() && ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == contract.SignalRefresh {
				signalled = at
			}
			if started.IsZero() && ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
				started = at
			}
		}
		c.event(ev)
	}
	sums := map[onboardStep]float64{}
	for s, d := range c.steps {
		sums[s] = d.Seconds()
	}
	switch {
	case !started.IsZero() && (signalled.IsZero() || started.Before(signalled)):
		sums[stepApplyReach] = started.Sub(from).Seconds()
	case !signalled.IsZero():
		sums[stepPushReach] = signalled.Sub(from).Seconds()
	}
	if !last.IsZero() {
		sums[stepStatusRead] = to.Sub(last).Seconds()
	}
	return breakdownRows(sums, 1, to.Sub(from).Seconds()), nil
}

// pushDuring pushes in the background when synced of n apps are Synced
// at the next of its tenths, unless a push is under way.
func (p *pushProbe) pushDuring(ctx context.Context, synced int64, n int) {
	if p == nil {
		return
	}
	p.collect(false)
	if !p.due(synced, n) {
		return
	}
	done := make(chan probeResult, 1)
	p.inflight = done
	go func() {
		r := probeResult{}
		var began time.Time
		if r.took, began, r.err = p.pushAt(ctx); r.err == nil {
			r.steps, r.err = p.steps(ctx, began, began.Add(time.Duration(r.took*float64(time.Second))))
		}
		done <- r
	}()
}

// due tells whether a push goes now, and takes its tenth and those passed
// with it off next.
func (p *pushProbe) due(synced int64, n int) bool {
	if p.inflight != nil || len(p.next) == 0 || synced < int64(p.next[0]*n/10) {
		return false
	}
	for len(p.next) > 0 && synced >= int64(p.next[0]*n/10) {
		p.next = p.next[1:]
	}
	return true
}

// collect keeps the result of the push under way once it is done; wait:
// until it is.
func (p *pushProbe) collect(wait bool) {
	if p.inflight == nil {
		return
	}
	if wait {
		p.busy = append(p.busy, <-p.inflight)
		p.inflight = nil
		return
	}
	select {
	case r := <-p.inflight:
		p.busy, p.inflight = append(p.busy, r), nil
	default:
	}
}

// figure is the pushes during the onboarding, beside the idle stack's.
func (p *pushProbe) figure(n int, repro string) *Figure {
	p.collect(true)
	d := pushProbeText{N: n, Idle: Summarize(p.idle), IdlePushes: probeIdlePushes, Mode: "webhook", Tenths: probeTenths}
	if !p.w.Webhook {
		d.Mode = "refresh"
	}
	f := &Figure{ID: fmt.Sprintf("onboard-%d-push", n), Title: fmt.Sprintf("Onboard %d apps, a push to a synced app meanwhile", n),
		Unit: "s", Reproduce: repro}
	sums := map[onboardStep]float64{}
	var total float64
	for _, r := range p.busy {
		if r.err != nil {
			d.Errs = append(d.Errs, r.err.Error())
			continue
		}
		f.Samples = append(f.Samples, r.took)
		total += r.took
		for _, s := range r.steps {
			sums[onboardStep(s.Step)] += s.Mean
		}
	}
	switch {
	case len(p.busy) == 0:
		d.Errs = []string{"a tenth of the fleet was never Synced"}
	case len(f.Samples) > 0:
		d.Pushes = len(f.Samples)
		d.Ratio = Summarize(f.Samples).Median / d.Idle.Median
		d.Steps = breakdownRows(sums, float64(len(f.Samples)), total)
	}
	f.What = say(d, "what")
	return f
}

// pushProbeText is the data of text/onboard_push.md.tmpl.
type pushProbeText struct {
	N, IdlePushes, Pushes int
	Tenths                []int
	Idle                  Summary
	Mode                  string
	// Errs are the pushes that failed.
	Errs  []string
	Ratio float64
	// Steps: where a push went, the mean of the pushes' histories.
	Steps []breakdownStep
}

func (pushProbeText) textFile() string { return "onboard_push" }
