package activities

import (
	"context"
	"encoding/json"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/notify"
)

// Notifications sends the notifications apps' triggers fire, through the
// services of the worker's notifications config.
type Notifications struct {
	// Config is the worker's argocd-notifications-cm: a *notify.Config
	// read from a file, or the *notify.Live the worker watches in its
	// control cluster.
	Config NotificationSender
	// Secrets resolve the services' $secret references.
	Secrets *notify.Secrets
}

// NotificationSender sends one notification through the worker's config.
type NotificationSender interface {
	Send(ctx context.Context, d notify.Delivery, appObject json.RawMessage, secrets *notify.Secrets) error
}

var (
	_ NotificationSender = (*notify.Config)(nil)
	_ NotificationSender = (*notify.Live)(nil)
)

// Register adds the notification activity to a worker of the control queue.
func (n *Notifications) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(n.SendNotification, activity.RegisterOptions{Name: contract.ActivitySendNotification})
}

// SendNotification renders and sends one notification. A receiver that is
// down or answers 5xx is retried by the workflow's policy; one the config
// cannot send is refused for good. Errors name no secret (package notify).
func (n *Notifications) SendNotification(ctx context.Context, in contract.NotificationInput) error {
	err := n.Config.Send(ctx, in.Delivery, in.Object, n.Secrets)
	switch {
	case err == nil:
		activity.GetLogger(ctx).Info("notification sent", "app", in.App, "id", in.Delivery.ID,
			"trigger", in.Delivery.Trigger, "service", in.Delivery.Service)
		return nil
	case notify.IsPermanent(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrNotificationRefused, nil)
	}
	return temporal.NewApplicationError(err.Error(), "")
}
