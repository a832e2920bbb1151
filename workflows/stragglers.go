package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Regions on their own: in parallel mode (no rollout), a region whose
// compare has not answered stragglerGrace after the first region answered
// is a straggler. The reconcile goes on without it: the regions that
// answered are shown and synced at once, the straggler keeps what it last
// showed and is skipped by the operation, and its compare runs on. A
// straggler that has not answered regionAnswerTimeout after its compare
// began is shown Unreachable. Once its compare ends, the app reconciles
// again: a region that answers again is compared and synced then.
//
// Before this change the reconcile waited for every region's compare, so a
// hung API server held back every region's sync until its request timed
// out. Runs recorded before it took the old path; versionRegionsOnTheirOwn
// keeps them replaying.
const versionRegionsOnTheirOwn = "regions-on-their-own"

const (
	// stragglerGrace is the most a region that answered waits for the
	// others before the app goes on without them (issue 16 allows a second,
	// and the workflow task that follows the timer takes its share). A
	// region that answers later costs one more operation, a moment later.
	stragglerGrace = 250 * time.Millisecond
	// regionAnswerTimeout is how long a straggler's compare may run before
	// the region is shown Unreachable.
	regionAnswerTimeout = 10 * time.Second
)

// straggler is a region whose compare did not answer in time and runs on.
type straggler struct {
	future workflow.Future
	// since is when its compare began.
	since time.Time
	// overdue: shown Unreachable for not answering in regionAnswerTimeout.
	overdue bool
}

// regionsOnTheirOwn reports whether this compare may go on without the
// regions that do not answer: in parallel mode with more than one region,
// in runs that take the path.
func (s *appState) regionsOnTheirOwn(ctx workflow.Context) bool {
	if s.rollsOut() || len(s.destinations()) < 2 {
		return false
	}
	return changeVersion(ctx, versionRegionsOnTheirOwn) >= 1
}

// takeStragglers removes from dests the regions whose compare still runs,
// and collects the stragglers whose compare has ended: their outcome is
// stale (a new compare starts now), but an error says why the region is
// Unreachable should the new compare straggle too.
func (s *appState) takeStragglers(ctx workflow.Context, dests []app.Target) (compare []app.Target, lateErrs map[string]error) {
	lateErrs = make(map[string]error)
	for _, d := range dests {
		st := s.stragglers[d.Region]
		if st == nil {
			compare = append(compare, d)
			continue
		}
		if !st.future.IsReady() {
			continue
		}
		delete(s.stragglers, d.Region)
		var out contract.CompareResult
		if err := st.future.Get(ctx, &out); err != nil {
			lateErrs[d.Region] = err
		}
		compare = append(compare, d)
	}
	return compare, lateErrs
}

// waitForAnswers selects on the regions' compares until every one has
// answered or, with onTheirOwn, stragglerGrace has passed since the first
// answer (answered is kept by the futures' callbacks); it returns the
// regions that did not answer by then.
func waitForAnswers(ctx workflow.Context, sel workflow.Selector, futures map[string]workflow.Future,
	answered map[string]bool, onTheirOwn bool) []string {
	left := func() (out []string) {
		for _, r := range workflow.DeterministicKeys(futures) {
			if !answered[r] {
				out = append(out, r)
			}
		}
		return out
	}
	var cancelGrace workflow.CancelFunc
	expired := false
	for pending := left(); len(pending) > 0 && !expired; pending = left() {
		sel.Select(ctx)
		pending = left()
		if !onTheirOwn || cancelGrace != nil || len(pending) == 0 || len(pending) == len(futures) {
			continue
		}
		// The grace starts once the answers already in are taken.
		ready := false
		for _, r := range pending {
			ready = ready || futures[r].IsReady()
		}
		if ready {
			continue
		}
		var gctx workflow.Context
		gctx, cancelGrace = workflow.WithCancel(ctx)
		timer := workflow.NewTimerWithOptions(gctx, stragglerGrace, workflow.TimerOptions{Summary: timerStragglerGrace})
		sel.AddFuture(timer, func(f workflow.Future) { expired = f.Get(ctx, nil) == nil })
	}
	if pending := left(); len(pending) > 0 {
		return pending
	}
	if cancelGrace != nil {
		cancelGrace()
	}
	return nil
}

// overdueErrs marks the stragglers that have run past regionAnswerTimeout
// Unreachable, unless an error already says why.
func (s *appState) overdueErrs(now time.Time, regionErrs map[string]error) {
	for _, region := range workflow.DeterministicKeys(s.stragglers) {
		st := s.stragglers[region]
		if _, known := regionErrs[region]; known || now.Sub(st.since) < regionAnswerTimeout {
			continue
		}
		if !st.overdue {
			st.overdue = true
			regionErrs[region] = &unansweredError{after: regionAnswerTimeout}
		}
	}
}

// unansweredError is a region that has not answered its compare in time:
// it counts as unreachable.
type unansweredError struct{ after time.Duration }

func (e *unansweredError) Error() string {
	return fmt.Sprintf("Unreachable: no answer from the region for %s; the other regions go on without it, and it syncs once it answers", e.after)
}

// stragglerAnswered reports whether a straggler's compare has ended: the
// app reconciles again to compare and sync that region.
func (s *appState) stragglerAnswered() bool {
	for _, st := range s.stragglers {
		if st.future.IsReady() {
			return true
		}
	}
	return false
}

// stragglerDeadline is how long until a straggler that is not shown
// Unreachable yet runs past regionAnswerTimeout.
func (s *appState) stragglerDeadline(now time.Time) (time.Duration, bool) {
	var next time.Duration
	found := false
	for _, region := range workflow.DeterministicKeys(s.stragglers) {
		st := s.stragglers[region]
		if st.overdue {
			continue
		}
		d := max(st.since.Add(regionAnswerTimeout).Sub(now), time.Millisecond)
		if !found || d < next {
			next, found = d, true
		}
	}
	return next, found
}

func (s *appState) isStraggler(region string) bool { return s.stragglers[region] != nil }
