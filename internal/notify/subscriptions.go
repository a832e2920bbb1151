package notify

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// globalSubscription is one entry of the ConfigMap's subscriptions key, as
// Argo CD documents it: recipients ("<service>[:<recipient>]") of the
// triggers (all of defaultTriggers when none) for the apps whose labels
// the selector matches (every app when empty).
type globalSubscription struct {
	Recipients []string `json:"recipients"`
	Triggers   []string `json:"triggers,omitempty"`
	Selector   string   `json:"selector,omitempty"`
	selector   labels.Selector
}

// readSubscriptions reads the subscriptions key; what it names is checked
// by checkSubscriptions once every key is read.
func (c *Config) readSubscriptions(key, value string, fail func(string, string, ...any)) {
	if err := yaml.UnmarshalStrict([]byte(value), &c.subscriptions); err != nil {
		fail(key, "not a list of {recipients, triggers, selector}: %v", err)
		return
	}
	for i := range c.subscriptions {
		s := &c.subscriptions[i]
		sel, err := labels.Parse(s.Selector)
		if err != nil {
			fail(key, "subscription %d: selector %q: %v; write a label selector such as team=web,env!=dev", i, s.Selector, err)
			sel = labels.Nothing()
		}
		s.selector = sel
	}
}

// checkSubscriptions names every recipient whose service, and every
// trigger, the ConfigMap neither configures nor builds in.
func (c *Config) checkSubscriptions(fail func(string, string, ...any)) {
	for i, s := range c.subscriptions {
		if len(s.Recipients) == 0 {
			fail(subscriptionsKey, "subscription %d has no recipients; list <service>[:<recipient>], e.g. slack:deploys", i)
		}
		for _, r := range s.Recipients {
			service, _ := splitRecipient(r)
			if c.services[service] == nil {
				fail(subscriptionsKey, "subscription %d: recipient %q: no service.%s is configured", i, r, service)
			}
		}
		for _, t := range s.Triggers {
			if c.triggers[t] == nil {
				fail(subscriptionsKey, "subscription %d: trigger %q is neither in the ConfigMap nor built in", i, t)
			}
		}
	}
}

func splitRecipient(r string) (service, recipient string) {
	service, recipient, _ = strings.Cut(strings.TrimSpace(r), ":")
	return service, recipient
}

// HasSubscriptions tells whether the ConfigMap subscribes apps by itself
// (its subscriptions key), so that an app without subscribe annotations
// may have notifications too.
func (c *Config) HasSubscriptions() bool { return c != nil && len(c.subscriptions) > 0 }

// subscriptionsFor are the ConfigMap's subscriptions of an app with these
// labels, in the ConfigMap's order.
func (c *Config) subscriptionsFor(appLabels map[string]string) []Subscription {
	var out []Subscription
	for _, s := range c.subscriptions {
		if s.selector == nil || !s.selector.Matches(labels.Set(appLabels)) {
			continue
		}
		triggers := s.Triggers
		if len(triggers) == 0 {
			triggers = []string{""} // the defaultTriggers, as Evaluate reads an empty one
		}
		for _, r := range s.Recipients {
			service, recipient := splitRecipient(r)
			for _, t := range triggers {
				out = append(out, Subscription{Trigger: t, Service: service, Recipient: recipient})
			}
		}
	}
	return out
}

// withGlobal adds the ConfigMap's subscriptions of the app (its object's
// metadata.labels) to the annotations' own, each (trigger, service,
// recipient) once.
func (c *Config) withGlobal(obj map[string]any, subs []Subscription) []Subscription {
	if !c.HasSubscriptions() {
		return subs
	}
	appLabels := map[string]string{}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if l, ok := md["labels"].(map[string]any); ok {
			for k, v := range l {
				appLabels[k] = fmt.Sprint(v)
			}
		}
	}
	seen := map[Subscription]bool{}
	var out []Subscription
	for _, s := range append(append([]Subscription{}, subs...), c.subscriptionsFor(appLabels)...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
