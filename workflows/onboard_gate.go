package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// The onboarding gate lets new apps take their first sync Capacity at a
// time, first come first served: a mass onboarding then keeps the work
// in flight to what the workers finish within their deadlines, and the
// apps behind wait without a task, a timer or a backlog of their own in
// Temporal (a waiting app's workflow is asleep on a signal). It is the
// semaphore of Temporal's samples: one workflow, signalled by the apps.

// onboardLease is how long an admitted app holds its place without saying
// it is done: an app that died, or whose first sync outlives it, lets the
// next one in (it still runs; only the bound loosens).
const onboardLease = 10 * time.Minute

// onboardGateEvents: the gate continues as new past this many events of
// its history, carrying its state.
const onboardGateEvents = 10_000

type onboardGate struct {
	contract.OnboardGateState
	// lease: the timer of the first lease to end, when one runs; sending:
	// the go signals not yet delivered.
	lease   workflow.Future
	sending int
}

// OnboardGate is the gate's workflow (contract.OnboardGateWorkflow).
func (w *Workflows) OnboardGate(ctx workflow.Context, in contract.OnboardGateState) error {
	g := &onboardGate{OnboardGateState: in}
	if g.Admitted == nil {
		g.Admitted = map[string]time.Time{}
	}
	if err := workflow.SetQueryHandler(ctx, contract.QueryStatus, g.view); err != nil {
		return err
	}
	wants := workflow.GetSignalChannel(ctx, contract.SignalOnboardWant)
	dones := workflow.GetSignalChannel(ctx, contract.SignalOnboardDone)
	for {
		// A run continued as new may carry a queue: let apps in first.
		g.expire(workflow.Now(ctx))
		g.admit(ctx)
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() > onboardGateEvents || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := workflow.Await(ctx, func() bool { return g.sending == 0 }); err != nil {
				return err
			}
			g.drain(ctx, wants, dones)
			return workflow.NewContinueAsNewError(ctx, contract.OnboardGateWorkflow, g.OnboardGateState)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(wants, func(c workflow.ReceiveChannel, _ bool) {
			var req contract.OnboardRequest
			c.Receive(ctx, &req)
			g.want(req)
		})
		sel.AddReceive(dones, func(c workflow.ReceiveChannel, _ bool) {
			var req contract.OnboardRequest
			c.Receive(ctx, &req)
			g.done(req.App)
		})
		if g.lease == nil && len(g.Admitted) > 0 {
			// Wakes the gate when the oldest place's lease ends.
			g.lease = workflow.NewTimer(ctx, g.nextExpiry(workflow.Now(ctx)))
		}
		if g.lease != nil {
			sel.AddFuture(g.lease, func(workflow.Future) { g.lease = nil })
		}
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		if err := ctx.Err(); err != nil {
			return err // cancelled
		}
		// Take every signal already there before letting apps in.
		for sel.HasPending() {
			sel.Select(ctx)
		}
	}
}

// want queues app, once; a capacity given replaces the gate's.
func (g *onboardGate) want(req contract.OnboardRequest) {
	if req.Capacity > 0 {
		g.Capacity = req.Capacity
	}
	if _, in := g.Admitted[req.App]; in || req.App == "" || slices.Contains(g.Queue, req.App) {
		return
	}
	g.Queue = append(g.Queue, req.App)
}

// done frees app's place, or takes it out of the queue.
func (g *onboardGate) done(app string) {
	delete(g.Admitted, app)
	g.Queue = slices.DeleteFunc(g.Queue, func(a string) bool { return a == app })
}

// admit lets the first apps of the queue in while there is room, telling
// each. A signal to an app that is gone fails; its place is freed then.
func (g *onboardGate) admit(ctx workflow.Context) {
	now := workflow.Now(ctx)
	for len(g.Queue) > 0 && len(g.Admitted) < max(g.Capacity, 1) {
		app := g.Queue[0]
		g.Queue = g.Queue[1:]
		g.Admitted[app] = now
		sent := workflow.SignalExternalWorkflow(ctx, app, "", contract.SignalOnboardGo, nil)
		g.sending++
		workflow.Go(ctx, func(ctx workflow.Context) {
			err := sent.Get(ctx, nil)
			g.sending--
			if err != nil {
				delete(g.Admitted, app)
				g.admit(ctx)
			}
		})
	}
}

// expire frees the places whose lease ended.
func (g *onboardGate) expire(now time.Time) {
	for app, at := range g.Admitted {
		if now.Sub(at) >= onboardLease {
			delete(g.Admitted, app)
		}
	}
}

// nextExpiry is how long until the first lease ends.
func (g *onboardGate) nextExpiry(now time.Time) time.Duration {
	first := now.Add(onboardLease)
	for _, at := range g.Admitted {
		if at.Before(first) {
			first = at
		}
	}
	return max(first.Add(onboardLease).Sub(now), time.Second)
}

// drain takes the signals that came before the gate continues as new, so
// that none is lost with this run.
func (g *onboardGate) drain(ctx workflow.Context, wants, dones workflow.ReceiveChannel) {
	for {
		var req contract.OnboardRequest
		switch {
		case wants.ReceiveAsync(&req):
			g.want(req)
		case dones.ReceiveAsync(&req):
			g.done(req.App)
		default:
			return
		}
	}
}

func (g *onboardGate) view() (contract.OnboardGateView, error) {
	return contract.OnboardGateView{Capacity: g.Capacity, Admitted: len(g.Admitted), Queued: len(g.Queue)}, nil
}
