package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// service is a service.<type>[.<name>] of the ConfigMap, its $secret
// references unresolved.
type service struct {
	name, typ string
	opts      options
}

// options are one service type's keys, as Argo CD reads them: the struct
// its value unmarshals into (strictly: an unknown key is an error).
type options interface {
	// check names what the value lacks, once read.
	check() error
	// send sends the rendered notification; name is the service's, which
	// keys webhook templates.
	send(ctx context.Context, name string, n Notification, d Delivery) error
}

// serviceTypes are the service types Ferry sends through, each with a new,
// empty value of its options.
var serviceTypes = map[string]func() options{
	TypeWebhook:     func() options { return &WebhookOptions{} },
	TypeSlack:       func() options { return &SlackOptions{} },
	TypeGitHub:      func() options { return &GitHubOptions{} },
	TypeEmail:       func() options { return &EmailOptions{} },
	TypeTeams:       func() options { return &TeamsOptions{} },
	TypeOpsgenie:    func() options { return &OpsgenieOptions{} },
	TypePagerDutyV2: func() options { return &PagerDutyV2Options{} },
	TypePagerDuty:   func() options { return &PagerDutyOptions{} },
	TypeTelegram:    func() options { return &TelegramOptions{} },
	TypeMattermost:  func() options { return &MattermostOptions{} },
	TypeGoogleChat:  func() options { return &GoogleChatOptions{} },
}

// transportOptions are the HTTP transport's keys Argo CD's HTTP services
// take: read so that an existing ConfigMap is accepted, not used (each
// send opens its own connection, bounded by sendTimeout).
type transportOptions struct {
	MaxIdleConns        int    `json:"maxIdleConns,omitempty"`
	MaxIdleConnsPerHost int    `json:"maxIdleConnsPerHost,omitempty"`
	MaxConnsPerHost     int    `json:"maxConnsPerHost,omitempty"`
	IdleConnTimeout     string `json:"idleConnTimeout,omitempty"`
}

func parseService(rest, value string) (*service, error) {
	typ, name, named := strings.Cut(rest, ".")
	if !named {
		name = typ
	}
	newOptions, ok := serviceTypes[typ]
	if !ok {
		return nil, fmt.Errorf("service type %q: Ferry sends through %s; remove this service from the file given to Ferry", typ, strings.Join(sortedKeys(serviceTypes), ", "))
	}
	if typ == TypeWebhook && (!named || name == "") {
		return nil, fmt.Errorf("a webhook service is named: service.webhook.<name>")
	}
	s := &service{name: name, typ: typ, opts: newOptions()}
	if err := yaml.UnmarshalStrict([]byte(value), s.opts); err != nil {
		return nil, err
	}
	if err := s.opts.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// secretRef is a $key in a service's value.
var secretRef = regexp.MustCompile(`\$[A-Za-z0-9_-]+`)

// resolved is a copy of the service with the $secret references of every
// string of its options (map values and list items too) replaced.
func (s *service) resolved(secrets *Secrets) (*service, error) {
	raw, err := json.Marshal(s.opts)
	if err != nil {
		return nil, fmt.Errorf("service %q: %w", s.name, err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("service %q: %w", s.name, err)
	}
	var missing []string
	tree = mapStrings(tree, "", func(_, v string) string {
		return secretRef.ReplaceAllStringFunc(v, func(ref string) string {
			v, ok := secrets.lookup(ref[1:])
			if !ok {
				missing = append(missing, ref)
			}
			return v
		})
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		missing = slices.Compact(missing)
		return nil, fmt.Errorf("service %q: %s not found: %s", s.name, strings.Join(missing, ", "), secrets.where(missing))
	}
	c := *s
	c.opts = serviceTypes[s.typ]()
	raw, _ = json.Marshal(tree)
	if err := json.Unmarshal(raw, c.opts); err != nil {
		return nil, fmt.Errorf("service %q: %w", s.name, err)
	}
	return &c, nil
}

// CheckSecrets names every $secret reference of the services that neither
// the environment nor the Secret file holds.
func (c *Config) CheckSecrets(secrets *Secrets) error {
	if c == nil {
		return nil
	}
	var errs []string
	for _, name := range sortedKeys(c.services) {
		if _, err := c.services[name].resolved(secrets); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("notifications secrets: %s", strings.Join(errs, "; "))
	}
	return nil
}

// recipientEntry is the entry for recipient of a service's map keyed by
// recipient (Teams' recipientUrls, Opsgenie's apiKeys, …).
func recipientEntry(entries map[string]string, recipient, key, typ string) (string, error) {
	if v, ok := entries[recipient]; ok && v != "" {
		return v, nil
	}
	if recipient == "" {
		return "", permanent("the subscription names no recipient; give one of %s's %s (subscribe.<trigger>.<service>: <recipient>)", typ, key)
	}
	return "", permanent("recipient %q is not in service.%s's %s; add it there or subscribe one of %s", recipient, typ, key, strings.Join(sortedKeys(entries), ", "))
}
