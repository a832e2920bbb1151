// Package hooks runs an Application's sync hooks in one cluster: the
// rendered objects annotated argocd.argoproj.io/hook (or Helm's
// helm.sh/hook), which the Sync phase's apply leaves aside (package
// syncplan) for the phases around it.
//
// A hook belongs to phases (PreSync, Sync, PostSync, SyncFail, PostDelete;
// Skip keeps it out of everything), a wave (argocd.argoproj.io/sync-wave, or
// helm.sh/hook-weight) and delete policies (BeforeHookCreation when none is
// given, HookSucceeded, HookFailed). Parse reads them; Count gives the
// numbers per phase that a workflow decides on.
//
// Exactly once. Every hook object of an operation has a fixed name (a
// generateName hook gets a suffix derived from the operation ID, see Name)
// and carries the annotation ferry.dev/hook-operation with the operation
// ID. A Run that is tried again, after its worker died, finds the objects it
// created and waits for them instead of creating others; an object left by
// an older operation is deleted first when its policy says
// BeforeHookCreation, and refused otherwise. Run deletes nothing after a
// hook finished: it reports which objects their policy wants gone, and the
// caller deletes them (Delete) once the results are recorded, so that a run
// repeated after a crash never finds a succeeded hook missing and starts it
// again.
//
//	r := &hooks.Runner{Dynamic: cluster.Dynamic(), Mapper: cluster.RESTMapper()}
//	results, err := r.Run(ctx, hooks.Request{
//		App: "shop", Namespace: "shop", OperationID: "3-1a2b3c4d",
//		Phase: app.HookTypePreSync, Objects: rendered,
//	})
//	if hooks.IsFailed(err) {
//		// a hook failed or timed out: err says which and why
//	}
//
// Waiting: a Job until it is Complete or Failed, a Pod until it Succeeded or
// Failed, any other kind until it is healthy (package health). A failure
// message names the hook and the reason of its failing pod. A hook ends on
// its own timeout: a Job's or Pod's activeDeadlineSeconds (plus a grace for
// the controller to say so), else Runner.Timeout.
package hooks
