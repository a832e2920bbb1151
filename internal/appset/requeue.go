package appset

import "time"

// Requeue is how long the set waits before it runs its generators again,
// as Argo CD reckons it: the shortest wait of its generators (nested ones
// of a matrix or merge included). A generator's wait is its
// requeueAfterSeconds when it gives one; else the git and
// clusterDecisionResource generators wait def, and the pullRequest,
// scmProvider and plugin ones slowRequeue (Argo CD's defaults: they spare
// the providers' rate limits and the plugin's service). The list and
// clusters generators have no wait of their own (a cluster Secret's
// change runs the set at once); a set of them alone waits def.
func (s *ApplicationSet) Requeue(def time.Duration) time.Duration {
	wait := time.Duration(0)
	var walk func(gs []Generator)
	walk = func(gs []Generator) {
		for _, g := range gs {
			if w := g.wait(def); w > 0 && (wait == 0 || w < wait) {
				wait = w
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
	if wait == 0 {
		return def
	}
	return wait
}

// slowRequeue is the wait of a pullRequest, scmProvider or plugin
// generator that gives no requeueAfterSeconds: Argo CD's default for each.
const slowRequeue = 30 * time.Minute

// wait is how long the generator g itself waits (def for the git and
// clusterDecisionResource ones), 0 when it has no wait of its own.
func (g Generator) wait(def time.Duration) time.Duration {
	var secs *int64
	other := def
	switch {
	case g.Git != nil:
		secs = g.Git.RequeueAfterSeconds
	case g.ClusterDecisionResource != nil:
		secs = g.ClusterDecisionResource.RequeueAfterSeconds
	case g.PullRequest != nil:
		secs, other = g.PullRequest.RequeueAfterSeconds, slowRequeue
	case g.SCMProvider != nil:
		secs, other = g.SCMProvider.RequeueAfterSeconds, slowRequeue
	case g.Plugin != nil:
		secs, other = g.Plugin.RequeueAfterSeconds, slowRequeue
	default:
		return 0
	}
	if secs != nil && *secs > 0 {
		return time.Duration(*secs) * time.Second
	}
	return other
}
