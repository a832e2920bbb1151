package workflows

import (
	"maps"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// versionIdleSkip: a poll may skip its compare (above); the runs before it
// compared on every poll.
const versionIdleSkip = "idle-skip-compare"

// idleSettings are the worker's, recorded once per run.
type idleSettings struct {
	Every    int           `json:"every"`
	Interval time.Duration `json:"interval"`
	// RepoPoll is Config.RepoPollInterval; 0 (and in runs recorded before
	// it): the app polls alone.
	RepoPoll time.Duration `json:"repoPoll,omitempty"`
}

// idleState is what the run knows of its polls' compares.
type idleState struct {
	decided, on bool
	settings    idleSettings
	// ask: the regions whose workers the resolve under way asks for;
	// workers: what the last resolve answered.
	ask     []string
	workers map[string]string
	// watched: per region, whether the compare under way was watched; nil
	// outside one.
	watched map[string]bool
	// last is the last compare that every region watches; nil when the
	// next poll compares.
	last *lastCompare
}

type lastCompare struct {
	key     string
	at      time.Time
	skipped int
	workers map[string]string
}

// idleBegin readies a reconcile's resolve: the first of a run decides the
// version and records the settings.
func (s *appState) idleBegin(ctx workflow.Context) {
	st := &s.polls
	if !st.decided {
		st.decided = true
		st.on = changeVersion(ctx, versionIdleSkip) == 1
		if st.on {
			cfg := idleSettings{Every: s.cfg.FullCompareEvery, Interval: s.cfg.FullCompareInterval, RepoPoll: s.cfg.RepoPollInterval}
			if err := workflow.SideEffect(ctx, func(workflow.Context) any { return cfg }).Get(&st.settings); err != nil {
				st.on = false
			}
		}
	}
	st.ask, st.workers = nil, nil
	if st.on && !s.app.IsMultiSource() {
		for _, d := range s.destinations() {
			st.ask = append(st.ask, d.Region)
		}
	}
}

// idleResolved takes what the resolve said of the region workers.
func (s *appState) idleResolved(workers map[string]string) {
	if s.polls.ask != nil {
		s.polls.workers = workers
	}
	s.polls.ask = nil
}

// skipCompare tells whether a poll leaves the compare of target out.
func (s *appState) skipCompare(ctx workflow.Context, target contract.Target) bool {
	st, l := &s.polls, s.polls.last
	if !st.on || l == nil {
		return false
	}
	now := workflow.Now(ctx)
	if l.key != s.idleKey(target) || !maps.Equal(l.workers, st.workers) ||
		l.skipped+1 >= st.settings.Every || now.Sub(l.at) >= st.settings.Interval || !s.idleQuiet(now) {
		return false
	}
	l.skipped++
	return true
}

// idleQuiet: nothing but a change in a region could make a compare find
// something new.
func (s *appState) idleQuiet(now time.Time) bool {
	if len(s.stragglers) > 0 || s.anyUnreachable() || s.hasChildren() || s.childrenSettling() ||
		s.resourcesSettling(now) || s.Status.Sync.Status == app.SyncStatusUnknown {
		return false
	}
	if s.app.AutomatedSync() && s.Status.Sync.Status == app.SyncStatusOutOfSync {
		return false
	}
	op := s.Status.OperationState
	return op == nil || op.PostSync == nil || op.PostSync.Phase != app.OperationRunning
}

func (s *appState) idleKey(t contract.Target) string {
	return t.Commit() + "/" + t.Digest + "/" + s.app.SpecDigest()
}

// idleCompareBegins starts collecting the regions' answers.
func (s *appState) idleCompareBegins() {
	s.polls.last = nil
	if s.polls.on {
		s.polls.watched = map[string]bool{}
	}
}

// idleAnswer notes a region's compare result.
func (s *appState) idleAnswer(region string, out contract.CompareResult) {
	if s.polls.watched != nil {
		s.polls.watched[region] = out.Watched
	}
}

// idleCompared remembers the compare of target when every region watches
// the app from now on.
func (s *appState) idleCompared(ctx workflow.Context, target contract.Target) {
	watched := s.polls.watched
	s.polls.watched, s.polls.last = nil, nil
	if !s.polls.on || len(s.stragglers) > 0 {
		return
	}
	for _, d := range s.destinations() {
		if !watched[d.Region] || s.polls.workers[d.Region] == "" {
			return
		}
	}
	s.polls.last = &lastCompare{key: s.idleKey(target), at: workflow.Now(ctx), workers: s.polls.workers}
}

// idleForget makes the next poll compare: something may have changed the
// regions (an operation), or the status is not a compare's.
func (s *appState) idleForget() { s.polls.last = nil }

// repoPolled is how long the app waits for its next poll of its own when
// a worker polls its repositories for it (above): the safety interval,
// when the worker's repository poll is as frequent as the app's own
// interval would be and every source is a Git repository's.
func (s *appState) repoPolled(interval time.Duration) (time.Duration, bool) {
	st := s.polls.settings
	if !s.polls.on || st.RepoPoll <= 0 || interval < st.RepoPoll || st.Interval <= interval {
		return 0, false
	}
	for _, src := range s.app.SourceList() {
		if src.IsChartSource() {
			return 0, false
		}
	}
	return st.Interval, true
}
