package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// appState is the Application workflow's state. Carried is what persists:
// a run starts from the one it is given and hands its own, as it is, to
// the next on continue-as-new (nextInput). perRun is what one run keeps:
// each run starts it afresh. A field that must outlive the run goes in
// Carried, nowhere else (docs/contributing/workflows.md).
type appState struct {
	cfg Config
	// app is the Application: the rest of every run's input.
	app app.Application
	Carried
	perRun
}

// Carried is the app's state that persists across continue-as-new, the
// ferryCarried field of Input. Its JSON is the history's: a run continued
// as new by an older worker hands this run its fields by these tags.
type Carried struct {
	Status app.Status `json:"status"`
	// Rendered and AutoSync: the last render and automated sync.
	Rendered     *rendered   `json:"rendered,omitempty"`
	AutoSync     *autoSync   `json:"autoSync,omitempty"`
	OperationSeq int64       `json:"operationSeq"`
	Refresh      *refreshReq `json:"refresh,omitempty"`
	// SearchUpserted are the search attributes the app last upserted.
	SearchUpserted searchAttrs `json:"searchUpserted"`
	// ChildApps are the apps this app of apps created and has not pruned.
	ChildApps []string `json:"childApps,omitempty"`
	// Owner is whom the app belongs to; nil: not recorded, the app began
	// before owners were (CheckOwner). A run starts with startOwner's.
	Owner *contract.Owner `json:"owner,omitempty"`
	// Notifications: what the app has notified (notify.go).
	Notifications notifyState `json:"notifications,omitzero"`
	// Operation is the operation that continued as new between two of its
	// retries (set at the hand-over): the next run resumes it, and clears
	// it (operation_carry.go).
	Operation *carriedOperation `json:"operation,omitempty"`
	// ObjectPublished is the objectDigest of the status last written to
	// the app's Application object (objects.go).
	ObjectPublished string `json:"objectPublished,omitempty"`
}

// perRun is what one run of the Application workflow keeps and the next
// starts without.
type perRun struct {
	syncs    []*pendingSync
	deletion *pendingDelete
	// onboardTurn: the app's place at the onboarding gate (onboard_turn.go).
	onboardTurn onboardTurn
	// maxReconciles of this run, before it continues as new.
	maxReconciles int
	// untouched is the last push known not to change the app's manifests.
	untouched *untouchedPush
	// refusedChildren: the last compare found these children to name apps
	// of another owner.
	refusedChildren []string
	// excluded: what each region's last compare left out as excluded by
	// resource.exclusions/inclusions (excluded.go).
	excluded map[string][]app.ResourceKey
	// workerRegions is the worker's regions configuration; cfg.Regions the
	// one the run recorded (recordRegions). regionsVersion: whether the run
	// records it, once decided.
	workerRegions  *regions.Config
	regionsVersion *workflow.Version
	// pruneConfirmedOp is the operation whose prunes ferry app confirm
	// confirmed.
	pruneConfirmedOp string
	// running is the operation under way, for the handlers that act on it
	// (terminate-op); nil between operations.
	running *operation
	// notifyEvaluated is the notifyDigest of the status last evaluated for
	// notifications: a new run evaluates once more (nothing is sent twice:
	// Notifications.Notified persists).
	notifyEvaluated string
	// deletingSince is when a delete began (notifyDeleting): the app's
	// object carries it as metadata.deletionTimestamp, as Argo CD's does.
	deletingSince *time.Time
	// stragglers are the regions whose compare runs on without the app
	// waiting for it (stragglers.go).
	stragglers map[string]*straggler
	// polls: when a poll may leave its compare out (idle.go).
	polls idleState
	// syncing is the sync update whose operation runs; nil otherwise.
	syncing *pendingSync
	// retries: the operations' retries in this run, which count towards
	// continue-as-new as reconciles do; continuing: the operation this run
	// carries to the next (Carried.Operation).
	retries    int
	continuing *operation
	// onboard: the shortcuts of a new app's first reconcile (onboard.go).
	onboard onboardState
	// deleted: the app's delete finished; the workflow ends, and its status
	// query answers that the app does not exist (statusView).
	deleted bool
	// object: the writes of status to the app's Application object.
	object objectPublish
}

// nextInput is the input of the run that continues this one: the app and
// its Carried state as they are, with the operation that continues
// between its retries.
func (s *appState) nextInput() Input {
	c := s.Carried
	if op := s.continuing; op != nil {
		c.Operation = op.carried()
	}
	return Input{Application: s.app, Carried: &c}
}
