package main

import (
	"fmt"
	"os"

	"github.com/ferry-gitops/ferry/internal/notify"
)

type notificationsFlags struct {
	config string
	secret string
}

// loadNotifications reads --notifications-config and checks that every
// $secret reference of its services resolves now, through
// --notifications-secret or FERRY_NOTIFY_<KEY>: a problem stops the worker
// at start, not at the first notification.
func loadNotifications(f notificationsFlags) (*notify.Config, *notify.Secrets, error) {
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
