package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// maxAppSetLoops bounds the generations of one run before it continues as
// new: each costs a handful of events.
const maxAppSetLoops = 200

// appSetSettlePolls is how many times a set looks again every settlePoll
// after it changed its apps, so that their sync and health show soon.
const appSetSettlePolls = 24

type pendingAppSetDelete struct {
	err  error
	done bool
}

// appSetState is the ApplicationSet workflow's state: the embedded
// AppSetCarried persists, handed as it is to the next run on
// continue-as-new (nextInput); the rest is one run's.
type appSetState struct {
	set appset.ApplicationSet
	contract.AppSetCarried
	// refresh: run the generators now; fresh asks Git itself.
	refresh  *refreshReq
	deletion *pendingAppSetDelete
	settle   int
	repos    []string
	// rolling: a RollingSync has apps Pending or on their way to Healthy.
	rolling bool
	// published is the owned list the memo holds, nil before the first.
	published []string
}

// ApplicationSet is the workflow of one set: it runs the generators (an
// activity) every poll, on a refresh and on a new spec, and makes the apps
// it owns what they generate. Its input is the set as JSON, read as
// strictly as `ferry appset apply` reads a file.
func (w *Workflows) ApplicationSet(ctx workflow.Context, raw json.RawMessage) error {
	set, carried, err := parseAppSetInput(raw)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "InvalidApplicationSet", nil)
	}
	s := &appSetState{set: *set, refresh: &refreshReq{}}
	if carried != nil {
		s.AppSetCarried = *carried
		if !carried.Refresh {
			s.refresh = nil
		}
	}
	if err := s.registerHandlers(ctx); err != nil {
		return err
	}
	return s.run(ctx, carried == nil)
}

func (s *appSetState) run(ctx workflow.Context, first bool) error {
	for loops := 0; ; loops++ {
		if s.deletion != nil {
			if s.runDelete(ctx) {
				return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			}
			continue
		}
		if first || s.refresh != nil || loops > 0 {
			fresh := s.refresh != nil && s.refresh.Hard
			s.refresh = nil
			s.reconcile(ctx, fresh)
		}
		if loops+1 >= maxAppSetLoops || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return err
			}
			if s.deletion == nil {
				return workflow.NewContinueAsNewError(ctx, contract.AppSetWorkflow, s.nextInput())
			}
		}
		if s.refresh != nil || s.deletion != nil {
			continue
		}
		delay, summary := s.pollDelay()
		poll := workflow.AwaitOptions{Timeout: delay, TimerOptions: workflow.TimerOptions{Summary: summary}}
		if _, err := workflow.AwaitWithOptions(ctx, poll, func() bool { return s.refresh != nil || s.deletion != nil }); err != nil {
			return err
		}
	}
}

// pollDelay: settlePoll for a while after the set changed its apps, until
// they are Synced and Healthy; else the git generators' requeue interval.
func (s *appSetState) pollDelay() (time.Duration, string) {
	if s.rolling {
		return settlePoll, "rollout progressing"
	}
	// A RollingSync set waits on its apps comparing a push even when they
	// look settled: they may not have seen it yet.
	if s.settle > 0 && (s.set.RollingSync() || !s.appsSettled()) {
		s.settle--
		return settlePoll, "apps settling"
	}
	return s.requeue(), "next generation"
}

func (s *appSetState) appsSettled() bool {
	for _, r := range s.Status.Resources {
		if r.Status != app.SyncStatusSynced || r.Health == nil || r.Health.Status != app.HealthHealthy {
			return false
		}
	}
	return true
}

// requeue is the shortest requeueAfterSeconds of the set's generators,
// else defaultAppSetPoll.
func (s *appSetState) requeue() time.Duration {
	return s.set.Requeue(defaultAppSetPoll)
}

func appSetActivityCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             summary,
		TaskQueue:           contract.TaskQueue,
		StartToCloseTimeout: renderTimeout,
		HeartbeatTimeout:    activityHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{contract.ErrInvalidAppSet},
		},
	})
}

// reconcile runs the generators and makes the apps what they generate.
func (s *appSetState) reconcile(ctx workflow.Context, fresh bool) {
	name := s.set.Metadata.Name
	s.publishRepos(ctx)
	if fresh && s.set.RollingSync() {
		// A push may move the apps: look at them often for a while, as
		// they compare the new commit.
		s.settle = appSetSettlePolls
	}
	var gen contract.GenerateResult
	err := workflow.ExecuteActivity(appSetActivityCtx(ctx, "Generate applicationset "+name), contract.ActivityGenerateAppSet,
		contract.GenerateInput{Set: s.set, Fresh: fresh, MaxAge: s.requeue()}).Get(ctx, &gen)
	now := workflow.Now(ctx)
	if err != nil {
		msg := contract.ErrorMessage(err)
		s.setError(now, reasonParamsGenerationError, msg)
		s.setCondition(now, contract.AppSetParametersGenerated, "False", reasonErrorOccurred, msg)
		return
	}
	s.Status.Revisions = gen.Revisions
	s.setCondition(now, contract.AppSetParametersGenerated, "True", reasonParametersGenerated, msgParametersGenerated)
	in := contract.ReconcileInput{Set: name, Apps: gen.Apps, Previous: s.Owned, Policy: s.set.Policy(),
		NoDelete: !s.set.Deletes() || len(gen.Invalid) > 0, Preserve: s.set.PreserveResources(),
		Ignore: s.set.Spec.IgnoreApplicationDifferences, Preserved: s.set.Spec.PreservedFields}
	var res contract.ReconcileResult
	if err := workflow.ExecuteActivity(appSetActivityCtx(ctx, "Reconcile the apps of applicationset "+name), contract.ActivityReconcileAppSet, in).Get(ctx, &res); err != nil {
		s.setError(now, s.writeErrorReason(), contract.ErrorMessage(err))
		return
	}
	s.applyResult(now, res, gen.Invalid, gen.Apps)
	s.publishOwned(ctx)
	s.progress(ctx, gen.Apps, res)
}

// applyResult records what the reconcile did: the owned apps, their rows
// and the conditions that sum them up.
func (s *appSetState) applyResult(now time.Time, res contract.ReconcileResult, invalid []string, generated []app.Application) {
	s.Owned = res.Owned
	s.Status.Resources = nil
	for _, a := range res.Apps {
		switch a.Action {
		case contract.AppCreated, contract.AppUpdated, contract.AppDeleted:
			s.settle = appSetSettlePolls
		}
		if a.Action == contract.AppDeleted || a.Action == contract.AppReleased {
			continue
		}
		r := contract.AppSetResource{Group: "argoproj.io", Version: "v1alpha1", Kind: app.Kind, Name: a.Name, Namespace: "argocd",
			Status: a.Sync, Message: a.Message}
		if a.Health != "" {
			r.Health = &contract.AppSetHealth{Status: a.Health}
		}
		s.Status.Resources = append(s.Status.Resources, r)
	}
	s.setOutcome(now, res, invalid, generated)
}

// publishRepos keeps the memo naming the set's repositories current.
func (s *appSetState) publishRepos(ctx workflow.Context) {
	repos := s.set.GitRepos()
	if fmt.Sprint(repos) == fmt.Sprint(s.repos) {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{contract.MemoAppSetRepos: repos}); err != nil {
		workflow.GetLogger(ctx).Warn("upsert memo failed", "error", err)
		return
	}
	s.repos = repos
}

// versionOwnedMemo: runs from this version on keep memoAppSetOwned current;
// the recorded ones upserted no such memo.
const versionOwnedMemo = "appset-owned-memo"

// publishOwned keeps the memo naming the set's apps current.
func (s *appSetState) publishOwned(ctx workflow.Context) {
	if slices.Equal(s.published, s.Owned) && s.published != nil {
		return
	}
	if changeVersion(ctx, versionOwnedMemo) == workflow.DefaultVersion {
		return
	}
	owned := append([]string{}, s.Owned...)
	if err := workflow.UpsertMemo(ctx, map[string]any{contract.MemoAppSetOwned: owned}); err != nil {
		workflow.GetLogger(ctx).Warn("upsert memo failed", "error", err)
		return
	}
	s.published = owned
}

// versionDeletePolicy: runs from this version on let the set's
// applicationsSync decide what its deletion does to its apps; the
// recorded ones deleted them whatever the policy.
const versionDeletePolicy = "appset-delete-policy"

// runDelete deletes the set's apps (with their resources unless
// preserveResourcesOnDeletion) or, when its policy deletes no app
// (create-only, create-update), releases them, as Argo CD's controller
// drops its owner references from them; true when none is left the set's.
func (s *appSetState) runDelete(ctx workflow.Context) bool {
	p := s.deletion
	policy := appset.PolicySync
	if changeVersion(ctx, versionDeletePolicy) != workflow.DefaultVersion {
		policy = s.set.Policy()
	}
	in := contract.ReconcileInput{Set: s.set.Metadata.Name, Previous: s.Owned, Policy: policy,
		Preserve: s.set.PreserveResources(), DeleteAll: true}
	var res contract.ReconcileResult
	err := workflow.ExecuteActivity(appSetActivityCtx(ctx, "Delete the apps of applicationset "+s.set.Metadata.Name), contract.ActivityReconcileAppSet, in).Get(ctx, &res)
	if err == nil {
		s.applyResult(workflow.Now(ctx), res, nil, nil)
		if len(res.Owned) > 0 {
			err = fmt.Errorf("applicationset %q: %d app(s) neither deleted nor released: %s", s.set.Metadata.Name, len(res.Owned), joinMessages(res.Owned))
		}
	}
	p.err, p.done = err, true
	s.deletion = nil
	return err == nil
}

// nextInput is the input of the run that continues this one: the set and
// its carried state as they are, with whether a refresh waits (the run
// keeps its own in refresh).
func (s *appSetState) nextInput() AppSetInput {
	c := s.AppSetCarried
	c.Refresh = s.refresh != nil
	return AppSetInput{ApplicationSet: s.set, Carried: &c}
}

// appSetInput is the workflow input: the set, and on continue-as-new the
// state carried over.
type AppSetInput struct {
	appset.ApplicationSet
	Carried *contract.AppSetCarried `json:"ferryCarried,omitempty"`
}

// parseAppSetInput reads the input as `ferry appset apply` reads a file.
func parseAppSetInput(raw json.RawMessage) (*appset.ApplicationSet, *contract.AppSetCarried, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, fmt.Errorf("parse ApplicationSet: expected a JSON object: %w", err)
	}
	var carried *contract.AppSetCarried
	if c, ok := fields[carriedKey]; ok {
		delete(fields, carriedKey)
		if !bytes.Equal(bytes.TrimSpace(c), []byte("null")) {
			carried = &contract.AppSetCarried{}
			if err := json.Unmarshal(c, carried); err != nil {
				return nil, nil, fmt.Errorf("parse the state carried over from the previous run (%s): %w", carriedKey, err)
			}
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, nil, err
	}
	set, err := appset.Read(rest)
	if err != nil {
		return nil, nil, err
	}
	return set, carried, nil
}
