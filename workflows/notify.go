package workflows

import (
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/notify"
)

// versionNotifications: apps that subscribe to notifications evaluate
// their triggers when their status changes; runs recorded before did not.
const versionNotifications = "notifications"

// versionDefaultSubscriptions: an app without subscribe annotations is
// notified too when the ConfigMap's subscriptions key selects it; runs
// recorded before looked at annotated apps only.
const versionDefaultSubscriptions = "notifications-default-subscriptions"

// notifySubscriptionsID names the recorded answer to "does the worker's
// config subscribe apps by itself?" (a mutable side effect: recorded at
// the first status change of a run, then only when it changes).
const notifySubscriptionsID = "notifications-subscriptions"

// versionNotifyDeleting: a delete evaluates the triggers once more, the
// app's object carrying metadata.deletionTimestamp, so that Argo CD's
// on-deleted fires.
const versionNotifyDeleting = "notifications-on-delete"

// notifyState is what the app remembers of its notifications.
type notifyState struct {
	// Notified are the keys sent whose condition still holds (or that
	// are kept by oncePer), as Argo CD's notified annotation.
	Notified []notify.Notified `json:"notified,omitempty"`
	// Seq numbers the notifications sent.
	Seq int64 `json:"seq,omitempty"`
}

// IsZero: nothing notified yet, so Carried leaves the state out (omitzero),
// as it always has.
func (n notifyState) IsZero() bool { return len(n.Notified) == 0 && n.Seq == 0 }

type evaluation struct {
	Results  []notify.Result `json:"results,omitempty"`
	Problems []string        `json:"problems,omitempty"`
}

// notify evaluates the triggers the app subscribes to when what they
// look at changed, and starts a Notification workflow for each condition
// that began to hold. The evaluation is a side effect: the worker's
// config may change, the history keeps what was decided.
func (s *appState) notify(ctx workflow.Context) {
	subs := notify.Subscriptions(s.app.Metadata.Annotations)
	digest := s.notifyDigest()
	if digest == s.notifyEvaluated {
		return
	}
	if len(subs) == 0 {
		if !s.subscribedByConfig(ctx) {
			return
		}
	} else if changeVersion(ctx, versionNotifications) == workflow.DefaultVersion {
		return
	}
	s.notifyEvaluated = digest
	obj, err := notify.AppObject(s.app, s.Status)
	if err == nil && s.deletingSince != nil {
		obj, err = notify.WithDeletionTimestamp(obj, *s.deletingSince)
	}
	if err != nil {
		workflow.GetLogger(ctx).Warn("notifications not evaluated", "error", err)
		return
	}
	cfg, now := s.cfg.Notifications, workflow.Now(ctx)
	var out evaluation
	err = workflow.SideEffect(ctx, func(workflow.Context) any {
		if cfg == nil {
			return evaluation{Problems: []string{"no control worker has a notifications config (--notifications-config)"}}
		}
		r, p := cfg.Evaluate(obj, subs, now)
		return evaluation{Results: r, Problems: p}
	}).Get(&out)
	if err != nil {
		return
	}
	if len(out.Problems) > 0 {
		workflow.GetLogger(ctx).Warn("notifications", "app", s.app.Metadata.Name, "problems", strings.Join(out.Problems, "; "))
	}
	var send []notify.Result
	s.Notifications.Notified, send = notify.Transition(s.Notifications.Notified, out.Results, &s.Notifications.Seq)
	chain := chainTag(ctx)
	futures := make([]workflow.ChildWorkflowFuture, len(send))
	ids := make([]string, len(send))
	for i, r := range send {
		event := r.Key
		if r.OncePer == "" {
			event = fmt.Sprintf("%s#%d", r.Key, s.Notifications.Seq-int64(len(send)-1-i))
		}
		ids[i] = contract.NotificationWorkflowID(s.app.Metadata.Name, chain, event)
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			StaticSummary:         fmt.Sprintf("%s: %s to %s", s.app.Metadata.Name, r.Trigger, r.Service),
			WorkflowID:            ids[i],
			TaskQueue:             contract.TaskQueue,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		})
		futures[i] = workflow.ExecuteChildWorkflow(cctx, contract.NotificationWorkflow, contract.NotificationInput{
			App: s.app.Metadata.Name, Object: obj,
			Delivery: notify.Delivery{ID: ids[i], Trigger: r.Trigger, Templates: r.Templates, Service: r.Service, Recipient: r.Recipient},
		})
	}
	for i, f := range futures {
		// Started, or started before (a duplicate is refused): sent once.
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			workflow.GetLogger(ctx).Warn("notification not started", "workflowID", ids[i], "error", err)
		}
	}
}

// notifyDeleting evaluates the triggers as the app's delete begins.
func (s *appState) notifyDeleting(ctx workflow.Context) {
	if changeVersion(ctx, versionNotifyDeleting) == workflow.DefaultVersion {
		return
	}
	now := workflow.Now(ctx)
	s.deletingSince = &now
	s.notify(ctx)
}

// subscribedByConfig tells whether an app without subscribe annotations
// is to be evaluated: the worker's config has a subscriptions key (which
// of them select the app is Evaluate's to say). The answer is recorded,
// once a run and when it changes, so that apps in a fleet without one
// cost no more than that.
func (s *appState) subscribedByConfig(ctx workflow.Context) bool {
	if changeVersion(ctx, versionDefaultSubscriptions) == workflow.DefaultVersion {
		return false
	}
	cfg := s.cfg.Notifications
	var has bool
	err := workflow.MutableSideEffect(ctx, notifySubscriptionsID, func(workflow.Context) any {
		return cfg != nil && cfg.HasSubscriptions()
	}, func(a, b any) bool { return a == b }).Get(&has)
	if err != nil || !has {
		// Evaluated again at the next change of status, which may find
		// a config with subscriptions.
		s.notifyEvaluated = s.notifyDigest()
		return false
	}
	return true
}

// notifyDigest is what triggers look at: the operation, sync and health
// status, the revision, the conditions and the spec.
func (s *appState) notifyDigest() string {
	var b strings.Builder
	st := s.Status
	fmt.Fprintf(&b, "%s|%s|%s|%s|%s", st.Sync.Status, st.Sync.Revision, st.Health.Status, st.Health.Message, s.app.SpecDigest())
	if op := st.OperationState; op != nil {
		fmt.Fprintf(&b, "|op %s %s %d", op.ID, op.Phase, op.RetryCount)
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, "|%s %s", c.Type, c.Message)
	}
	if s.deletingSince != nil {
		b.WriteString("|deleting")
	}
	for _, k := range workflow.DeterministicKeys(s.app.Metadata.Annotations) {
		fmt.Fprintf(&b, "|%s=%s", k, s.app.Metadata.Annotations[k])
	}
	// Labels: what the subscriptions key's selectors look at.
	for _, k := range workflow.DeterministicKeys(s.app.Metadata.Labels) {
		fmt.Fprintf(&b, "|label %s=%s", k, s.app.Metadata.Labels[k])
	}
	return b.String()
}

// Notification is the workflow of one notification: the activity retries
// while the receiver is down or the worker dies, for up to a day.
func (w *Workflows) Notification(ctx workflow.Context, in contract.NotificationInput) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                fmt.Sprintf("%s to %s", in.Delivery.Trigger, in.Delivery.Service),
		TaskQueue:              contract.TaskQueue,
		StartToCloseTimeout:    notifyAttemptTimeout,
		ScheduleToCloseTimeout: notifyGiveUp,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			NonRetryableErrorTypes: []string{contract.ErrNotificationRefused},
		},
	})
	return workflow.ExecuteActivity(actx, contract.ActivitySendNotification, in).Get(ctx, nil)
}

const (
	// notifyAttemptTimeout: an attempt whose worker died is retried after it.
	notifyAttemptTimeout = 30 * time.Second
	notifyGiveUp         = 24 * time.Hour
)
