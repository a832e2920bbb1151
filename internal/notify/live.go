package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// Live is a notifications config that may change while the worker runs:
// the argocd-notifications-cm a worker watches in its control cluster.
// Its methods use the config current when they are called; with none
// (the ConfigMap is missing), nothing is evaluated and a send waits for
// one.
type Live struct {
	cfg atomic.Pointer[Config]
	// Where names the ConfigMap watched, for problems and errors.
	Where string
}

// Set makes c the current config (nil: none).
func (l *Live) Set(c *Config) { l.cfg.Store(c) }

// Current is the config in use, nil when there is none.
func (l *Live) Current() *Config { return l.cfg.Load() }

// Evaluate is Config.Evaluate of the current config.
func (l *Live) Evaluate(appObject json.RawMessage, subs []Subscription, now time.Time) ([]Result, []string) {
	c := l.Current()
	if c == nil {
		if len(subs) == 0 {
			return nil, nil
		}
		return nil, []string{"no notifications config: " + l.Where + " is missing"}
	}
	return c.Evaluate(appObject, subs, now)
}

// HasSubscriptions is Config.HasSubscriptions of the current config.
func (l *Live) HasSubscriptions() bool { return l.Current().HasSubscriptions() }

// Send is Config.Send of the current config.
func (l *Live) Send(ctx context.Context, d Delivery, appObject json.RawMessage, secrets *Secrets) error {
	c := l.Current()
	if c == nil {
		// Retried: the ConfigMap may come back.
		return fmt.Errorf("notification %s: no notifications config: %s is missing", d.ID, l.Where)
	}
	return c.Send(ctx, d, appObject, secrets)
}

// WatchedSecret is the data of a Secret that may change while the worker
// runs (argocd-notifications-secret in the control cluster).
type WatchedSecret struct {
	data atomic.Pointer[map[string]string]
	// Name names the Secret in errors ("Secret argocd-notifications-secret
	// in namespace argocd").
	Name string
}

// Set makes data the Secret's keys and values (nil: the Secret is gone).
func (w *WatchedSecret) Set(data map[string]string) {
	if data == nil {
		w.data.Store(nil)
		return
	}
	w.data.Store(&data)
}

func (w *WatchedSecret) lookup(key string) (string, bool) {
	if w == nil {
		return "", false
	}
	p := w.data.Load()
	if p == nil {
		return "", false
	}
	v, ok := (*p)[key]
	return v, ok
}
