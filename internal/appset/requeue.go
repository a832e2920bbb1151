package appset

import "time"

// Requeue is how long the set waits before it runs its generators again:
// the shortest requeueAfterSeconds of its generators (nested ones of a
// matrix or merge included), else def.
func (s *ApplicationSet) Requeue(def time.Duration) time.Duration {
	d := def
	var walk func(gs []Generator)
	walk = func(gs []Generator) {
		for _, g := range gs {
			if r, ok := g.requeueAfter(); ok {
				d = min(d, r)
			}
			switch {
			case g.Matrix != nil:
				walk(g.Matrix.Generators)
			case g.Merge != nil:
				walk(g.Merge.Generators)
			}
		}
	}
	walk(s.Spec.Generators)
	return d
}

// requeueAfter is the generator's own requeueAfterSeconds, when it gives
// one above zero.
func (g Generator) requeueAfter() (time.Duration, bool) {
	var secs *int64
	switch {
	case g.Git != nil:
		secs = g.Git.RequeueAfterSeconds
	}
	if secs == nil || *secs <= 0 {
		return 0, false
	}
	return time.Duration(*secs) * time.Second, true
}
