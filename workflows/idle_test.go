package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// pollLog records, per reconcile (one resolve), whether it compared.
type pollLog struct {
	mu      sync.Mutex
	at      []time.Time
	compare []bool
	workers string
	watched bool
}

func (p *pollLog) resolve(now func() time.Time) func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
	return func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.at, p.compare = append(p.at, now()), append(p.compare, false)
		out := contract.ResolveResult{SHA: "1111111111111111111111111111111111111111"}
		if len(in.Regions) > 0 {
			out.Workers = map[string]string{}
			for _, r := range in.Regions {
				out.Workers[r] = p.workers
			}
		}
		return out, nil
	}
}

func (p *pollLog) compared(in contract.CompareInput) (contract.CompareResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.compare[len(p.compare)-1] = true
	return contract.CompareResult{Watched: p.watched, Resources: []app.ResourceStatus{{
		ResourceKey: app.ResourceKey{Group: "apps", Kind: "Deployment", Namespace: in.Namespace, Name: "web"},
		Region:      in.Region, Status: app.SyncStatusSynced, Health: app.HealthHealthy,
	}}}, nil
}

func (s *appSuite) idleRun(p *pollLog, until time.Duration, events map[time.Duration]func()) {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(p.resolve(s.env.Now))
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			return p.compared(in)
		})
	for at, fn := range events {
		s.env.RegisterDelayedCallback(fn, at)
	}
	s.deleteAt(until, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}

// TestIdlePollsSkipTheCompare: while every region watches the app and its
// workers stay, a poll compares only every FullCompareEvery-th time; a new
// region worker and a drift signal each make the next reconcile compare.
func (s *appSuite) TestIdlePollsSkipTheCompare() {
	p := &pollLog{workers: "w1", watched: true}
	start := s.env.Now()
	restart, drift := 160*time.Second, 225*time.Second
	s.idleRun(p, 300*time.Second, map[time.Duration]func(){
		restart: func() { p.mu.Lock(); p.workers = "w2"; p.mu.Unlock() },
		drift: func() {
			s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Drift: &contract.Drift{Region: "us-east-1", By: []string{"kubectl-edit"}}})
		},
	})
	s.Require().Greater(len(p.at), 25)
	skipped := 0
	afterRestart, afterDrift := false, false
	for i, at := range p.at {
		since := at.Sub(start)
		switch {
		case since < restart:
			s.Equal(i%contract.DefaultFullCompareEvery == 0, p.compare[i], "reconcile %d at %s: every 10th poll compares, the others skip", i, since)
		case !afterRestart:
			afterRestart = true
			s.True(p.compare[i], "the first poll after a region worker restarted compares (%s)", since)
		case since >= drift && !afterDrift:
			afterDrift = true
			s.True(p.compare[i], "the drift signal's reconcile compares (%s)", since)
			s.Less(since, drift+time.Second, "it reconciles at once")
		}
		if !p.compare[i] {
			skipped++
		}
	}
	s.True(afterRestart && afterDrift)
	s.Greater(skipped, 20)
}

// TestIdlePollsCompareWhenNotWatched: a region whose live cache does not
// watch the app (off, or not synced yet) is compared on every poll.
func (s *appSuite) TestIdlePollsCompareWhenNotWatched() {
	p := &pollLog{workers: "w1", watched: false}
	s.idleRun(p, 100*time.Second, nil)
	s.Require().Greater(len(p.at), 5)
	for i := range p.at {
		s.True(p.compare[i], "reconcile %d", i)
	}
}

// TestIdlePollsCompareEveryPollWhenConfigured: FullCompareEvery 1 is
// the old behaviour.
func (s *appSuite) TestIdlePollsCompareEveryPollWhenConfigured() {
	s.newEnv(Config{Regions: s.wf.cfg.Regions, FullCompareEvery: 1})
	p := &pollLog{workers: "w1", watched: true}
	s.idleRun(p, 100*time.Second, nil)
	s.Require().Greater(len(p.at), 5)
	for i := range p.at {
		s.True(p.compare[i], "reconcile %d", i)
	}
}

// TestIdlePollsCompareOncePerInterval: FullCompareInterval bounds how long
// an idle app goes without a compare, whatever FullCompareEvery says.
func (s *appSuite) TestIdlePollsCompareOncePerInterval() {
	s.newEnv(Config{Regions: s.wf.cfg.Regions, FullCompareEvery: 1000, FullCompareInterval: time.Minute})
	p := &pollLog{workers: "w1", watched: true}
	s.idleRun(p, 400*time.Second, nil)
	var last time.Time
	compares := 0
	for i, at := range p.at {
		if p.compare[i] {
			if compares > 0 {
				s.GreaterOrEqual(at.Sub(last), time.Minute, "reconcile %d", i)
				s.Less(at.Sub(last), time.Minute+12*time.Second, "reconcile %d: the first poll a minute after the last compare compares", i)
			}
			last, compares = at, compares+1
		}
	}
	s.GreaterOrEqual(compares, 5)
	s.Less(compares, len(p.at)/3)
}

// TestRepoPolledAppPollsForItsSafetyCompareOnly: with the worker polling
// the app's repository as often as the app would (RepoPollInterval), an
// idle app of a Git source polls alone once per FullCompareInterval, and
// compares each time; a push the worker's poll found refreshes it at
// once. A worker that polls less often than the app leaves its polls as
// they are.
func (s *appSuite) TestRepoPolledAppPollsForItsSafetyCompareOnly() {
	s.newEnv(Config{Regions: s.wf.cfg.Regions, RepoPollInterval: 10 * time.Second, FullCompareInterval: 2 * time.Minute})
	p := &pollLog{workers: "w1", watched: true}
	start := s.env.Now()
	pushed := 7*time.Minute + 5*time.Second
	s.idleRun(p, 12*time.Minute, map[time.Duration]func(){
		pushed: func() {
			s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Push: &contract.Push{Ref: "refs/heads/main", After: "2222222222222222222222222222222222222222"}})
		},
	})
	s.Require().GreaterOrEqual(len(p.at), 5)
	s.Less(len(p.at), 9, "polls of an app whose repository is polled for it: %v", p.at)
	sawPush := false
	for i := 1; i < len(p.at); i++ {
		gap, since := p.at[i].Sub(p.at[i-1]), p.at[i].Sub(start)
		if since >= pushed && !sawPush {
			sawPush = true
			s.Less(since, pushed+time.Second, "the push refreshes the app at once")
			continue
		}
		if p.at[i-1].Sub(start) >= pushed && p.at[i-1].Sub(start) < pushed+time.Second {
			continue // from the push's reconcile to the next safety poll
		}
		s.GreaterOrEqual(gap, 2*time.Minute, "reconcile %d at %s: the next safety poll", i, since)
		s.Less(gap, 2*time.Minute+13*time.Second, "reconcile %d at %s", i, since)
		s.True(p.compare[i], "reconcile %d at %s: a safety poll compares", i, since)
	}
	s.True(sawPush)

	s.newEnv(Config{Regions: s.wf.cfg.Regions, RepoPollInterval: 30 * time.Second, FullCompareInterval: 2 * time.Minute})
	p = &pollLog{workers: "w1", watched: true}
	s.idleRun(p, 100*time.Second, nil)
	s.Greater(len(p.at), 5, "an app that polls more often than the worker polls its repository polls on its own interval")
}

// TestAWokenPollCancelsItsTimer: a refresh wakes the app before its poll
// timer fires, and the timer is cancelled then, not left to fire later
// into a workflow task of its own (changeCancelAwaitTimers).
func (s *appSuite) TestAWokenPollCancelsItsTimer() {
	start := s.env.Now()
	refresh := 30 * time.Second
	// The timer running at the refresh, its due time, and what became of it.
	var pending string
	var due time.Duration
	ends := map[string]string{}
	s.env.SetOnTimerScheduledListener(func(id string, d time.Duration) {
		if at := s.env.Now().Sub(start); at < refresh && at+d > refresh {
			pending, due = id, at+d
		}
	})
	s.env.SetOnTimerFiredListener(func(id string) { ends[id] = "fired" })
	s.env.SetOnTimerCanceledListener(func(id string) { ends[id] = "cancelled at " + s.env.Now().Sub(start).String() })
	s.idleRun(&pollLog{workers: "w1"}, 100*time.Second, map[time.Duration]func(){
		refresh: func() { s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{}) },
	})
	s.Require().NotEmpty(pending, "a poll timer running at the refresh")
	s.Equal("cancelled at 30s", ends[pending], "the poll timer due at %s", due)
}
