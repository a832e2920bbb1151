package appset

import (
	"math"
	"time"
)

// Requeue is how long the set waits before it runs its generators again:
// the shortest requeueAfterSeconds of its generators (nested ones of a
// matrix or merge included), else def. A set with pullRequest or
// scmProvider generators and no git generator waits as Argo CD does: the
// shortest of their requeueAfterSeconds, each 30 minutes when it gives
// none (defaultSCMRequeue), unless another generator gives a shorter
// requeueAfterSeconds; a git generator beside them keeps def.
func (s *ApplicationSet) Requeue(def time.Duration) time.Duration {
	d := def
	// scmWait: the shortest wait of the SCM generators; others: the
	// shortest requeueAfterSeconds of the other generators, which still
	// win when shorter.
	scmWait, others := time.Duration(0), time.Duration(math.MaxInt64)
	git := false
	var walk func(gs []Generator)
	walk = func(gs []Generator) {
		for _, g := range gs {
			r, ok := g.requeueAfter()
			if ok {
				d = min(d, r)
			}
			if w, scm := g.scmRequeue(); scm {
				if scmWait == 0 || w < scmWait {
					scmWait = w
				}
			} else if ok {
				others = min(others, r)
			}
			switch {
			case g.Git != nil:
				git = true
			case g.Matrix != nil:
				walk(g.Matrix.Generators)
			case g.Merge != nil:
				walk(g.Merge.Generators)
			}
		}
	}
	walk(s.Spec.Generators)
	// No set of a recorded history has an SCM generator (they were
	// refused): keyed on them, the rule leaves those histories alone.
	if scmWait > 0 && !git {
		return min(scmWait, others)
	}
	return d
}

// requeueAfter is the generator's own requeueAfterSeconds, when it gives
// one above zero.
func (g Generator) requeueAfter() (time.Duration, bool) {
	var secs *int64
	switch {
	case g.Git != nil:
		secs = g.Git.RequeueAfterSeconds
	case g.PullRequest != nil:
		secs = g.PullRequest.RequeueAfterSeconds
	case g.SCMProvider != nil:
		secs = g.SCMProvider.RequeueAfterSeconds
	case g.ClusterDecisionResource != nil:
		secs = g.ClusterDecisionResource.RequeueAfterSeconds
	case g.Plugin != nil:
		secs = g.Plugin.RequeueAfterSeconds
	}
	if secs == nil || *secs <= 0 {
		return 0, false
	}
	return time.Duration(*secs) * time.Second, true
}

// scmRequeue is how often a pullRequest or scmProvider generator asks to
// run: its requeueAfterSeconds, else defaultSCMRequeue.
func (g Generator) scmRequeue() (time.Duration, bool) {
	if g.PullRequest == nil && g.SCMProvider == nil {
		return 0, false
	}
	if r, ok := g.requeueAfter(); ok {
		return r, true
	}
	return defaultSCMRequeue, true
}
