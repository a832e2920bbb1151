package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// Priorities of an app's activities, Temporal's task queue priority keys:
// when a queue has a backlog (a region's workers busy with a mass
// onboarding), its tasks go out by key, 1 first, and in order within a key.
// What someone waits for goes first: an explicit sync or rollback, a
// refresh or a webhook push, a drift to heal or to show. The work of
// keeping things as they are goes last: a poll's compare, a new app's
// first compare and sync. A server whose matcher ignores priorities
// (matching.useNewMatcher off, the default before Temporal 1.30) serves
// them all in order, as before.
const (
	priorityUrgent  = 1
	priorityRoutine = 3 // Temporal's default
	priorityBulk    = 5
)

type priorityKey struct{}

// withPriority makes the activities started under ctx go out at key p.
func withPriority(ctx workflow.Context, p int) workflow.Context {
	return workflow.WithValue(ctx, priorityKey{}, p)
}

// versionUrgentRegionQueue sends urgent region work to the region's urgent
// queue: a key that goes first still waits for one of the region worker's
// slots, which a mass onboarding's routine work holds (a push waited 10.6
// s on average for one while 5,000 apps onboarded); the urgent queue's
// slots are its own. A run begun before it sends all to RegionQueue.
const versionUrgentRegionQueue = "urgent-region-queue"

// regionQueue is the task queue of region for the activities started under
// ctx: the urgent one for urgent work (withPriority).
func regionQueue(ctx workflow.Context, region string) string {
	if p, _ := ctx.Value(priorityKey{}).(int); p == priorityUrgent &&
		changeVersion(ctx, versionUrgentRegionQueue) == 1 {
		return contract.UrgentRegionQueue(region)
	}
	return contract.RegionQueue(region)
}

// withActivityOptions is workflow.WithActivityOptions keeping the priority
// that ctx carries (withPriority).
func withActivityOptions(ctx workflow.Context, opts workflow.ActivityOptions) workflow.Context {
	if p, ok := ctx.Value(priorityKey{}).(int); ok {
		opts.Priority = temporal.Priority{PriorityKey: p}
	}
	return workflow.WithActivityOptions(ctx, opts)
}

// reconcilePriority is the priority of a reconcile: a new app's first and
// a safety poll's (the repository poller signals a new commit anyway) are
// bulk, another poll's routine; one that someone or something asked for (a
// refresh, a push, a drift the region saw) is urgent.
func (s *appState) reconcilePriority(poll bool) int {
	_, safety := s.repoPolled(s.app.PollInterval())
	switch {
	case s.isNew() || poll && safety:
		return priorityBulk
	case poll:
		return priorityRoutine
	}
	return priorityUrgent
}
