package workflows

import "go.temporal.io/sdk/workflow"

// versionBaseline marks the runs that begin with every change of
// baselineChanges in force. Each workflow.GetVersion of a new run writes a
// version marker and an upsert of the TemporalChangeVersion search
// attribute, which Temporal turns into a visibility write of its own: a new
// app paid about ten of them in its first workflow tasks. A baseline run
// pays one, at its start. Runs begun before it (and their recorded
// histories) have no baseline marker, so they ask for each change as they
// always did.
const versionBaseline = "baseline-2026-12"

// baselineChanges are the changes a baseline run has from its start. Never
// add one: a baseline run begun before a later change must replay without
// it, so a later change asks for its own version (changeVersion does, for
// an ID not listed here).
var baselineChanges = map[string]bool{
	changeArgoRetryMessages: true, changeDefaultProject: true, changeProjectPermissions: true,
	changeRetryContinueAsNew: true, changeRetrySpec: true, changeRetryWait: true, changeSyncWindows: true,
	deleteChildrenVersion: true, deleteGoneRegionsVersion: true, hooksChange: true, ownershipVersion: true,
	rollbackSourceVersion: true, rollbackSourcesVersion: true, versionAppInfo: true,
	versionDefaultSubscriptions: true, versionDeletePolicy: true, versionFailedSyncAnswered: true,
	versionIdleSkip: true, versionNotifications: true, versionNotifyDeleting: true, versionOnboard: true,
	versionOnboardGate: true, versionOwnedMemo: true, versionPlainMessages: true, versionPostSyncPublish: true,
	versionPreSyncUnreachable: true, versionRecordRegions: true, versionRegionsOnTheirOwn: true,
	versionRepoURLs: true, versionUnreachableStays: true,
}

type baselineKey struct{}

// withBaseline decides, as a run's first command, whether it is a baseline
// run, and keeps the answer in the context its code runs under.
func withBaseline(ctx workflow.Context) workflow.Context {
	on := workflow.GetVersion(ctx, versionBaseline, workflow.DefaultVersion, 1) == 1
	return workflow.WithValue(ctx, baselineKey{}, on)
}

// changeVersion is the version of change (DefaultVersion, or 1 where it is
// in force) in this run: 1 without a marker in a baseline run, else the
// version workflow.GetVersion records. A context that does not carry the
// baseline asks too, which replays the same way in either kind of run.
func changeVersion(ctx workflow.Context, change string) workflow.Version {
	if on, _ := ctx.Value(baselineKey{}).(bool); on && baselineChanges[change] {
		return 1
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1)
}
