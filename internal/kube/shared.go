package kube

import (
	"context"
	"fmt"
)

// Shared resources. An object whose tracking id names another Ferry
// application is shared. As in Argo CD, a sync takes it over by default
// (FailOnSharedResource=false): it is applied with this app's tracking id,
// so the other app no longer prunes or deletes it and shows it OutOfSync.
// With FailOnSharedResource=true the sync fails before its first write.

// refuseShared implements FailOnSharedResource=true: before anything is
// written, every object whose options ask for it is looked up, and one that
// another application tracks gets its error, so that the sync stops before
// it starts (as Argo CD's does) rather than in the wave of that object.
func (s *syncRun) refuseShared(ctx context.Context, tasks []*task) {
	var check []*task
	for _, t := range tasks {
		if t.err == nil && t.mapping != nil && t.opts.FailOnSharedResource {
			check = append(check, t)
		}
	}
	runLimited(s.c.opts.Concurrency, len(check), func(i int) {
		t := check[i]
		live, err := s.c.liveGet(ctx, t.mapping, t.key)
		switch {
		case err != nil:
			t.err = newObjectError(t.key, "get", err)
		case live != nil:
			if owner := trackedBy(live); owner != "" && owner != t.app {
				t.err = sharedError(t, owner)
			}
		}
	})
}

func sharedError(t *task, owner string) *ObjectError {
	return newObjectError(t.key, "apply", invalidf(
		"shared resource: already tracked by Ferry application %q, and FailOnSharedResource=true refuses to take it over: remove it from that application, or drop FailOnSharedResource=true to take it over", owner))
}

// takenOver is the Change message of a shared object a sync took over.
func takenOver(owner string) string {
	return fmt.Sprintf("taken over from Ferry application %q (a shared resource; FailOnSharedResource=true refuses this)", owner)
}
