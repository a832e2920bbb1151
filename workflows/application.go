package workflows

import (
	"encoding/json"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// Config is the worker's knowledge the workflows need. Validators use it;
// it must be the same on every control worker.
type Config struct {
	// Regions are the known regions and how destinations map to them (nil:
	// any region name; see package regions).
	Regions *regions.Config
	// MaxReconciles overrides DefaultMaxReconciles (tests).
	MaxReconciles int
	// FullCompareEvery and FullCompareInterval: an idle app whose regions
	// watch it compares anyway every FullCompareEvery-th poll and once per
	// FullCompareInterval (idle.go; 0: the defaults).
	FullCompareEvery    int
	FullCompareInterval time.Duration
	// RepoPollInterval is how often the control workers list the apps'
	// repositories for them (--repo-poll-interval; 0: off): see idle.go.
	RepoPollInterval time.Duration
	// Notifications evaluates the triggers apps subscribe to (nil: none
	// configured). It may differ between workers: what it decided is in
	// the history.
	Notifications contract.Notifier
	// UIURL is ferry-server's address (no trailing slash), that the app's
	// details in the Temporal Web UI link to; empty: no link. Only the
	// details use it, which no history records, so it may differ between
	// workers.
	UIURL string
	// OnboardConcurrency is how many new apps take their first sync at
	// once (--onboard-concurrency; 0: no bound), through the onboarding
	// gate (onboard_gate.go). What a run decided is in its history.
	OnboardConcurrency int
	// OnboardWait is how long a new app waits for its turn before it asks
	// the gate again (--onboard-wait; 0: onboardWait).
	OnboardWait time.Duration
}

// Workflows are registered on the control queue by the worker.
type Workflows struct {
	cfg Config
}

func New(cfg Config) *Workflows {
	if cfg.MaxReconciles <= 0 {
		cfg.MaxReconciles = contract.DefaultMaxReconciles
	}
	if cfg.FullCompareEvery <= 0 {
		cfg.FullCompareEvery = contract.DefaultFullCompareEvery
	}
	if cfg.FullCompareInterval <= 0 {
		cfg.FullCompareInterval = contract.DefaultFullCompareInterval
	}
	return &Workflows{cfg: cfg}
}

// Input is the workflow input: the Application as JSON. Carried holds the
// state a run hands to the next one on continue-as-new; users leave it out.
// The workflow reads it with parseInput, as strictly as `ferry app apply`.
type Input struct {
	app.Application
	Carried *Carried `json:"ferryCarried,omitempty"`
	// Owner is whom a new app belongs to (Apply); left out: a user.
	Owner *contract.Owner `json:"ferryOwner,omitempty"`
}

// rendered remembers the last render, so an unchanged (SHA, spec) skips it.
type rendered struct {
	SHA string `json:"sha"`
	// Revision: as Target.Revision.
	Revision   string `json:"revision,omitempty"`
	SpecDigest string `json:"specDigest"`
	Digest     string `json:"digest"`
	Count      int    `json:"count"`
	// Children are the Applications of an app of apps.
	Children []app.Application `json:"children,omitempty"`
	// Hooks counts the hooks per phase (RenderResult.Hooks).
	Hooks map[string]int `json:"hooks,omitempty"`
	// RemoteBases: as RenderResult.RemoteBases.
	RemoteBases int `json:"remoteBases,omitempty"`
	// Source is what was rendered when it was not spec.source (a
	// rollback's history entry); nil: spec.source.
	Source *app.Source `json:"source,omitempty"`
	// Sources are what was rendered when they were not spec.sources (a
	// rollback's history entry of a multi-source app); nil: spec.sources.
	Sources []app.Source `json:"sources,omitempty"`
	// Local is the digest of the local tree a local sync rendered (SHA
	// is then empty): Target.Local.
	Local string `json:"local,omitempty"`
}

// autoSync remembers the last automated sync: Argo CD syncs once per
// (revision, spec) and does not retry a failed one for the same key.
type autoSync struct {
	Key   string             `json:"key"`
	Phase app.OperationPhase `json:"phase"`
	// Unreachable: it failed only in regions that could not be reached; it
	// is tried again once they answer.
	Unreachable bool `json:"unreachable,omitempty"`
}

type refreshReq struct {
	Hard bool `json:"hard"`
	// DriftOnly: only a region's drift (or the same spec applied again)
	// asked; the shared refs cache and chart indexes may answer.
	DriftOnly bool `json:"driftOnly,omitempty"`
}

// pendingSync is a sync update waiting for the loop to run it.
type pendingSync struct {
	req    contract.SyncRequest
	result *app.OperationState
	err    error
	done   bool
}

type pendingDelete struct {
	req  contract.DeleteRequest
	err  error
	done bool
	// waiting says what the delete waits to be confirmed for (Delete=confirm);
	// confirmed: ferry app confirm gave it.
	waiting   string
	confirmed bool
}

// untouchedPush is a push that moved the app's branch without touching its
// manifest-generate-paths: the render of Before stands for After.
type untouchedPush struct {
	Before, After string
}

// Application is the workflow function of every app. Its input is an Input
// as raw JSON: parseInput refuses what the JSON converter would drop.
func (w *Workflows) Application(ctx workflow.Context, raw json.RawMessage) error {
	in, err := parseInput(raw)
	if err != nil {
		return invalidInput(err)
	}
	ctx = withBaseline(ctx) // versions.go
	s := &appState{cfg: w.cfg, app: in.Application, perRun: perRun{workerRegions: w.cfg.Regions, stragglers: make(map[string]*straggler)}}
	s.Status.Sync.Status = app.SyncStatusUnknown
	s.Status.Health.Status = app.HealthUnknown
	// A run that `ferry app apply` started carries an empty status
	// (newAppInput); one continued as new carries what it rendered or ran.
	s.onboard.firstRun = in.Carried == nil || (in.Carried.Rendered == nil && in.Carried.OperationSeq == 0)
	if in.Carried != nil {
		s.Carried = *in.Carried
	}
	s.Owner = startOwner(ctx, in)
	s.recordRegions(ctx)
	if err := app.Validate(&s.app, s.validateOptions()); err != nil {
		return invalidInput(err)
	}
	if err := s.registerHandlers(ctx); err != nil {
		return err
	}
	s.receivePostSyncResults(ctx)
	// The threshold is the worker's setting: recorded once per run, so that a
	// worker started with another one still replays this run the same way.
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return w.cfg.MaxReconciles }).Get(&s.maxReconciles); err != nil {
		return err
	}
	return s.run(ctx)
}

func (s *appState) run(ctx workflow.Context) error {
	s.publish(ctx)
	if c := s.Operation; c != nil {
		s.Operation = nil
		s.resumeOperation(ctx, c)
		s.idleForget()
		if s.continuing != nil {
			return s.continueAsNew(ctx)
		}
	}
	for reconciles := 0; ; {
		s.recordRegions(ctx)
		switch {
		case s.deletion != nil:
			if s.runDelete(ctx) {
				s.deleted = true
				return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			}
			s.deletion = nil
			s.idleForget()
		case len(s.syncs) > 0:
			p := s.syncs[0]
			s.syncs = s.syncs[1:]
			s.syncing = p
			result, err := s.manualSync(withPriority(ctx, priorityUrgent), p.req)
			s.syncing = nil
			if !p.done { // answered already when its operation continued as new
				p.result, p.err = result, err
				p.done = true
			}
			s.idleForget()
		default:
			if s.awaitOnboardTurn(ctx) { // onboard_turn.go
				s.reconcile(ctx)
				s.onboardDone(ctx)
			}
			reconciles++
		}
		if s.continuing != nil {
			return s.continueAsNew(ctx)
		}
		if s.idle() && (s.shouldContinueAsNew(ctx, reconciles) || s.leavesOnboardQueue(ctx)) {
			if ready, err := s.readyToContinue(ctx); err != nil {
				return err
			} else if ready {
				return s.continueAsNew(ctx)
			}
		}
		if s.idle() && s.Refresh == nil {
			delay, summary := s.pollDelay(workflow.Now(ctx))
			if d, ok := s.stragglerDeadline(workflow.Now(ctx)); ok && d < delay {
				delay, summary = d, timerRegionAnswer
			}
			poll := workflow.AwaitOptions{Timeout: delay, TimerOptions: workflow.TimerOptions{Summary: summary}}
			// A straggler's compare that ends wakes the loop: the app
			// compares and syncs that region.
			if _, err := await(ctx, poll, func() bool {
				return !s.idle() || s.Refresh != nil || s.stragglerAnswered()
			}); err != nil {
				return err
			}
		}
	}
}

// idle is true when no update waits for the loop.
func (s *appState) idle() bool { return len(s.syncs) == 0 && s.deletion == nil }

func (s *appState) shouldContinueAsNew(ctx workflow.Context, reconciles int) bool {
	return reconciles >= s.maxReconciles || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
}

// pollDelay is how long the app waits for its next poll, and the summary
// of that timer.
func (s *appState) pollDelay(now time.Time) (time.Duration, string) {
	interval, summary := s.app.PollInterval(), timerNextPoll
	if safety, ok := s.repoPolled(interval); ok {
		interval, summary = safety, timerSafetyPoll
	}
	if s.childrenSettling() || s.resourcesSettling(now) {
		interval, summary = min(interval, settlePoll), timerSettlePoll
	}
	return s.windowDelay(now, interval+app.Jitter(s.app.Metadata.Name, interval), summary)
}

func (s *appState) validateOptions() app.ValidateOptions {
	return app.ValidateOptions{Regions: s.cfg.Regions}
}

// statusView answers the status query: the view, or, once the app is
// deleted, that it does not exist, as Argo CD answers for a deleted
// Application. A closed workflow answers queries from its history still
// (temporal workflow query): the deleted app must not read as running.
// It changes no command: a replayed run answers the same.
func (s *appState) statusView() (contract.View, error) {
	if s.deleted {
		return contract.View{}, &contract.AppNotFoundError{Name: s.app.Metadata.Name}
	}
	v := s.view()
	if s.onboardTurn.waiting {
		v.Status.Conditions = append(slices.Clone(v.Status.Conditions), s.onboardTurn.queuedCondition())
	}
	return v, nil
}

func (s *appState) view() contract.View {
	st := s.Status
	st.OperationState = st.OperationState.WithSyncResult()
	return contract.View{Application: s.app, Status: st, Owner: s.Owner}
}
