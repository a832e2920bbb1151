package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/notify"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// A failed automated sync notifies its subscriber once, through a
// Notification workflow whose ID names the app; the reconciles after it,
// with the same failure standing, send nothing more. A send that fails
// with a 503 is retried by the notification's own policy.
func (s *appSuite) TestAFailedSyncNotifiesOnce() {
	cfg, err := notify.FromData(map[string]string{"service.webhook.hook": "url: http://127.0.0.1:1"})
	s.Require().NoError(err)
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1"), Notifications: cfg})
	s.env.RegisterWorkflowWithOptions(s.wf.Notification, workflow.RegisterOptions{Name: contract.NotificationWorkflow})
	var mu sync.Mutex
	var sent []contract.NotificationInput
	attempts := 0
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.NotificationInput) error {
		mu.Lock()
		defer mu.Unlock()
		if attempts++; attempts == 1 {
			return temporal.NewApplicationError("POST http://127.0.0.1:1 answered 503", "")
		}
		sent = append(sent, in)
		return nil
	}, activity.RegisterOptions{Name: contract.ActivitySendNotification})

	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	refused := temporal.NewNonRetryableApplicationError("Deployment/gb/web: apply: spec.replicas: Invalid value", contract.ErrSyncFailed, nil)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(contract.SyncResult{}, refused)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().NotNil(v.Status.OperationState)
		s.Equal(app.OperationFailed, v.Status.OperationState.Phase)
		mu.Lock()
		defer mu.Unlock()
		s.Require().Len(sent, 1, "one notification over several reconciles")
		s.Equal(2, attempts, "the 503 was retried")
		d := sent[0].Delivery
		s.Equal("on-sync-failed", d.Trigger)
		s.Equal("hook", d.Service)
		s.Equal([]string{"app-sync-failed"}, d.Templates)
		s.Contains(d.ID, "app/guestbook/notify/")
		s.Contains(string(sent[0].Object), `"syncResult":{"resources":null,"revision":"aaaaaaaaaaaaaaaa"}`)
	}, 55*time.Second)
	s.deleteAt(60*time.Second, false)
	in := testApp(true)
	in.Metadata.Annotations = map[string]string{notify.SubscribeAnnotation + "on-sync-failed.hook": ""}
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

// An app without subscribe annotations is notified when the config's
// subscriptions key selects its labels, and not otherwise.
func (s *appSuite) TestADefaultSubscriptionNotifiesTheAppItSelects() {
	sent := s.failWithDefaultSubscription(map[string]string{"team": "web"})
	s.Require().Len(sent, 1)
	s.Equal("on-sync-failed", sent[0].Delivery.Trigger)
	s.Equal("hook", sent[0].Delivery.Service)
}

func (s *appSuite) TestADefaultSubscriptionLeavesOutTheAppsItDoesNotSelect() {
	s.Empty(s.failWithDefaultSubscription(map[string]string{"team": "db"}))
}

// failWithDefaultSubscription runs an unannotated app with these labels
// whose sync fails, under a config subscribing team=web to on-sync-failed,
// and returns what was sent.
func (s *appSuite) failWithDefaultSubscription(labels map[string]string) []contract.NotificationInput {
	cfg, err := notify.FromData(map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1",
		"subscriptions":        "- recipients: [hook]\n  triggers: [on-sync-failed]\n  selector: team=web\n",
	})
	s.Require().NoError(err)
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1"), Notifications: cfg})
	s.env.RegisterWorkflowWithOptions(s.wf.Notification, workflow.RegisterOptions{Name: contract.NotificationWorkflow})
	var mu sync.Mutex
	var sent []contract.NotificationInput
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.NotificationInput) error {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, in)
		return nil
	}, activity.RegisterOptions{Name: contract.ActivitySendNotification})
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	refused := temporal.NewNonRetryableApplicationError("Deployment/gb/web: apply: spec.replicas: Invalid value", contract.ErrSyncFailed, nil)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(contract.SyncResult{}, refused)
	var out []contract.NotificationInput
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().NotNil(v.Status.OperationState)
		s.Equal(app.OperationFailed, v.Status.OperationState.Phase)
		mu.Lock()
		defer mu.Unlock()
		out = append(out, sent...)
	}, 55*time.Second)
	s.deleteAt(60*time.Second, false)
	in := testApp(true)
	in.Metadata.Labels = labels
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
	return out
}
