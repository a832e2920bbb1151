package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/notify"
)

type notificationsFlags struct {
	config string
	secret string
	// namespace and context: where the control cluster holds
	// argocd-notifications-cm and argocd-notifications-secret.
	namespace string
	context   string
}

// notifier is the worker's notifications config as the workflows and the
// notification activity use it: a *notify.Config of a file, or the
// *notify.Live of the control cluster.
type notifier interface {
	contract.Notifier
	activities.NotificationSender
}

// check refuses flags that do not go together.
func (f notificationsFlags) check() error {
	switch {
	case f.namespace != "" && (f.config != "" || f.secret != ""):
		return fmt.Errorf("--notifications-namespace %s reads argocd-notifications-cm and argocd-notifications-secret from the control cluster: "+
			"give it or --notifications-config/--notifications-secret, not both", f.namespace)
	case f.context != "" && f.namespace == "":
		return fmt.Errorf("--notifications-context %s needs --notifications-namespace", f.context)
	}
	return nil
}

// loadNotifications is the worker's notifications config: watched in
// --notifications-namespace, or read from --notifications-config (nil:
// none).
func loadNotifications(ctx context.Context, cfg *config) (notifier, *notify.Secrets, error) {
	if ns := cfg.notifications.namespace; ns != "" {
		live, secrets, err := watchNotifications(ctx, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("--notifications-namespace %s: %w", ns, err)
		}
		return live, secrets, nil
	}
	c, secrets, err := loadNotificationsFile(cfg.notifications)
	if c == nil {
		return nil, secrets, err
	}
	return c, secrets, err
}

// loadNotificationsFile reads --notifications-config and checks that every
// $secret reference of its services resolves now, through
// --notifications-secret or FERRY_NOTIFY_<KEY>: a problem stops the worker
// at start, not at the first notification.
func loadNotificationsFile(f notificationsFlags) (*notify.Config, *notify.Secrets, error) {
	secrets := &notify.Secrets{File: f.secret}
	if f.config == "" {
		if f.secret != "" {
			return nil, nil, fmt.Errorf("--notifications-secret %s needs --notifications-config", f.secret)
		}
		return nil, secrets, nil
	}
	data, err := os.ReadFile(f.config)
	if err != nil {
		return nil, nil, fmt.Errorf("--notifications-config: %w", err)
	}
	cfg, err := notify.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--notifications-config %s: %w", f.config, err)
	}
	if err := secrets.Check(); err != nil {
		return nil, nil, fmt.Errorf("--notifications-secret: %w", err)
	}
	if err := cfg.CheckSecrets(secrets); err != nil {
		return nil, nil, fmt.Errorf("--notifications-config %s: %w", f.config, err)
	}
	return cfg, secrets, nil
}
