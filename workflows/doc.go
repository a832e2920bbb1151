// Package workflows holds Ferry's Temporal workflows: orchestration only,
// deterministic, no I/O. The Application workflow is one app's durable
// reconcile loop; AppProject, ApplicationSet, PostSyncHooks, Notification
// and HandOverManifests are the others; Register registers them all, for
// the worker and for the replay test alike.
//
// Every file of this package replays. What crosses a process boundary
// (names, inputs and results, views, errors, search attributes) is in
// package contract; the client that starts, updates and queries workflows
// is package ferryclient. TestWorkflowsImportNoIO keeps this package to
// the SDK's deterministic packages, contract and Ferry's pure domain.
//
// # Changing a workflow safely
//
// An app's workflow runs for months, and a worker replays its history
// whenever it picks the app up: every change to this package must give
// the same commands, in the same order, for an existing history as the
// code that wrote it did. Two ways keep that true.
//
// Data in the history gates the change, with no version marker, when the
// new behaviour can only follow from an event the old code never
// recorded: a field the old code never set in an activity's result or a
// signal (a Sync result that carries its failure inside it, a
// ferryCarried field a new continue-as-new writes), a new update or
// signal name, a new spec field that an old app cannot have. The old
// history lacks the data, so replay takes the old branch.
//
// workflow.GetVersion gates everything else: a new or removed activity,
// timer, child workflow, side effect or search-attribute upsert on a path
// an existing history can take, a changed order of them. (A changed
// timeout or retry policy of an activity needs none: the SDK matches a
// scheduled activity to its event by ID and type only, and a replay reads
// the outcome from the history; activities scheduled after the change get
// the new options, as the compare's 20 s heartbeat did.) Name the change in a
// constant (ownershipVersion, versionAppInfo…), branch on the version where
// the command is issued, and keep the old branch until no history of the
// old code can be running anywhere (a release note says when it goes).
// Ask with changeVersion (versions.go): an app's run that began with the
// baseline version has every change made before it in force without a
// marker each, since each marker costs Temporal a visibility write; a
// change made after the baseline asks for its own version, through the
// same call (never add it to baselineChanges).
// A change to what a query or an update handler computes, to an activity's
// implementation, or to a log line needs neither. A marker that branches
// on nothing gates nothing: the SDK leaves version markers out of its
// determinism check, so a history replays whether the code still asks for
// its change or not (four such markers, on paths only a new update or
// request field reaches, were removed, and their histories still replay).
//
// The worker's configuration the workflow reads (Config) is recorded the
// same way: a value that changes what the workflow does goes through a
// workflow.SideEffect once per run (as MaxReconciles does), or a
// workflow.MutableSideEffect behind a version when a running app should
// follow a change of it (the regions configuration, recordRegions), so a
// worker started with other settings replays the run as it was.
//
// # Recorded histories
//
// testdata/histories holds histories of real runs on the real stack, one
// file per run, named NAME-COMMIT-RUN.json: the test's app, the commit
// whose workflow code recorded it, the end of the run ID.
// TestReplayRecordedHistories replays every one against the code of
// today. A change that adds a path records a history of it: `make
// record-histories` runs the end-to-end tests with FERRY_RECORD_HISTORIES
// set, from committed workflow code; commit the new files beside the
// change. The corpus covers the paths gated above: hooks and hook
// failures, PostSync and PostDelete, retries and continue-as-new, sync
// windows, ownership and projects, rollback, an app of apps, a staged
// rollout, an unreachable region, a frozen one (regions on their own) and
// one frozen mid-sync (unreachable-stays) or during its PreSync hooks
// (presync-unreachable, plain-error-messages), a sync refused in regions
// that answered (failed-sync-answered), webhook pushes, ApplicationSets; every workflow.GetVersion change has a
// history that takes its new branch.
package workflows
