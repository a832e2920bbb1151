package notify

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Data keys of argocd-notifications-cm.
const (
	triggerPrefix      = "trigger."
	templatePrefix     = "template."
	servicePrefix      = "service."
	contextKey         = "context"
	defaultTriggersKey = "defaultTriggers"
	subscriptionsKey   = "subscriptions"
)

// Service types Ferry sends through.
const (
	TypeWebhook     = "webhook"
	TypeSlack       = "slack"
	TypeGitHub      = "github"
	TypeEmail       = "email"
	TypeTeams       = "teams"
	TypeOpsgenie    = "opsgenie"
	TypePagerDutyV2 = "pagerdutyv2"
	TypePagerDuty   = "pagerduty"
	TypeTelegram    = "telegram"
	TypeMattermost  = "mattermost"
	TypeGoogleChat  = "googlechat"
)

// Config is what one argocd-notifications-cm says, with the built-in
// triggers and templates where it names none of theirs. A nil Config
// notifies nobody.
type Config struct {
	triggers        map[string][]Condition
	programs        map[string]*vm.Program // compiled when and oncePer, by source
	templates       map[string]*Template
	services        map[string]*service
	context         map[string]string
	defaultTriggers []string
	subscriptions   []globalSubscription
}

// Condition is one condition of a trigger, as Argo CD writes it.
type Condition struct {
	When        string   `json:"when"`
	OncePer     string   `json:"oncePer,omitempty"`
	Send        []string `json:"send"`
	Description string   `json:"description,omitempty"`
}

// Parse reads an argocd-notifications-cm ConfigMap manifest. It names
// every problem of the file at once, each with its data key.
func Parse(manifest []byte) (*Config, error) {
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(manifest, &cm); err != nil {
		return nil, fmt.Errorf("notifications config: not a ConfigMap manifest: %w", err)
	}
	if cm.Kind != "ConfigMap" {
		return nil, fmt.Errorf("notifications config: kind is %q; give the argocd-notifications-cm ConfigMap manifest", cm.Kind)
	}
	return FromData(cm.Data)
}

// FromData reads the data of an argocd-notifications-cm ConfigMap.
func FromData(data map[string]string) (*Config, error) {
	c := &Config{triggers: map[string][]Condition{}, programs: map[string]*vm.Program{},
		templates: map[string]*Template{}, services: map[string]*service{}}
	for name, conds := range builtinTriggers() {
		c.triggers[name] = conds
	}
	for name, t := range builtinTemplates() {
		c.templates[name] = t
	}
	var errs []error
	fail := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("argocd-notifications-cm data[%q]: %s", key, fmt.Sprintf(format, args...)))
	}
	for _, key := range sortedKeys(data) {
		value := data[key]
		switch {
		case strings.HasPrefix(key, triggerPrefix):
			c.readTrigger(key, value, fail)
		case strings.HasPrefix(key, templatePrefix):
			t, err := parseTemplate(strings.TrimPrefix(key, templatePrefix), value)
			if err != nil {
				fail(key, "%v", err)
				continue
			}
			c.templates[t.name] = t
		case strings.HasPrefix(key, servicePrefix):
			s, err := parseService(strings.TrimPrefix(key, servicePrefix), value)
			if err != nil {
				fail(key, "%v", err)
				continue
			}
			c.services[s.name] = s
		case key == contextKey:
			if err := yaml.UnmarshalStrict([]byte(value), &c.context); err != nil {
				fail(key, "not a map of strings: %v", err)
			}
		case key == defaultTriggersKey:
			if err := yaml.UnmarshalStrict([]byte(value), &c.defaultTriggers); err != nil {
				fail(key, "not a list of trigger names: %v", err)
			}
		case key == subscriptionsKey:
			c.readSubscriptions(key, value, fail)
		default:
			fail(key, "not a key Ferry reads: give trigger.<name>, template.<name>, service.<type>[.<name>], context, defaultTriggers or subscriptions")
		}
	}
	for _, name := range sortedKeys(c.triggers) {
		for i, cond := range c.triggers[name] {
			key := triggerPrefix + name
			if strings.TrimSpace(cond.When) == "" {
				fail(key, "condition %d: when is empty; give an expression such as app.status.health.status == 'Degraded'", i)
			}
			for _, src := range []string{cond.When, cond.OncePer} {
				if src == "" {
					continue
				}
				p, err := expr.Compile(src)
				if err != nil {
					fail(key, "condition %d: %q: %v", i, src, err)
					continue
				}
				c.programs[src] = p
			}
			for _, t := range cond.Send {
				if c.templates[t] == nil {
					fail(key, "condition %d sends template %q, which is neither in the ConfigMap nor built in; add template.%s", i, t, t)
				}
			}
			if len(cond.Send) == 0 {
				fail(key, "condition %d sends no template; list template names in send", i)
			}
		}
	}
	for _, t := range c.defaultTriggers {
		if c.triggers[t] == nil {
			fail(defaultTriggersKey, "trigger %q is neither in the ConfigMap nor built in", t)
		}
	}
	c.checkSubscriptions(fail)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// readTrigger reads trigger.<name>: a list of conditions, or one.
func (c *Config) readTrigger(key, value string, fail func(string, string, ...any)) {
	name := strings.TrimPrefix(key, triggerPrefix)
	if name == "" || strings.Contains(name, ".") {
		fail(key, "a trigger's name is one word without dots (trigger.on-sync-failed)")
		return
	}
	var conds []Condition
	if err := yaml.UnmarshalStrict([]byte(value), &conds); err != nil {
		var one Condition
		if err1 := yaml.UnmarshalStrict([]byte(value), &one); err1 != nil {
			fail(key, "not a list of conditions {when, oncePer, send, description}: %v", err)
			return
		}
		conds = []Condition{one}
	}
	if len(conds) == 0 {
		fail(key, "no conditions")
		return
	}
	c.triggers[name] = conds
}

// Services are the names of the configured services, sorted.
func (c *Config) Services() []string {
	if c == nil {
		return nil
	}
	return sortedKeys(c.services)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
