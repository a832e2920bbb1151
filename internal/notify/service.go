package notify

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// service is a service.<type>[.<name>] of the ConfigMap, its $secret
// references unresolved.
type service struct {
	name, typ string
	webhook   *WebhookOptions
	slack     *SlackOptions
	github    *GitHubOptions
}

// WebhookOptions are service.webhook.<name>'s.
type WebhookOptions struct {
	URL                string     `json:"url"`
	Headers            []Header   `json:"headers,omitempty"`
	BasicAuth          *BasicAuth `json:"basicAuth,omitempty"`
	InsecureSkipVerify bool       `json:"insecureSkipVerify,omitempty"`
	// Argo CD's in-process retries: Ferry's notification activity retries
	// instead (durably), so these are read and not used.
	RetryWaitMin string `json:"retryWaitMin,omitempty"`
	RetryWaitMax string `json:"retryWaitMax,omitempty"`
	RetryMax     int    `json:"retryMax,omitempty"`
}

type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type BasicAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// SlackOptions are service.slack's: a bot token (chat.postMessage on
// apiURL, to the recipient channel) or an incoming webhook's URL.
type SlackOptions struct {
	Token              string `json:"token,omitempty"`
	APIURL             string `json:"apiURL,omitempty"`
	WebhookURL         string `json:"webhookURL,omitempty"`
	Username           string `json:"username,omitempty"`
	Icon               string `json:"icon,omitempty"`
	SigningSecret      string `json:"signingSecret,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	DisableUnfurl      bool   `json:"disableUnfurl,omitempty"`
}

// GitHubOptions are service.github's: a GitHub App (as Argo CD) or a
// token; enterpriseBaseURL is the API's URL (GitHub Enterprise, or any
// server answering GitHub's API).
type GitHubOptions struct {
	AppID              any    `json:"appID,omitempty"`
	InstallationID     any    `json:"installationID,omitempty"`
	PrivateKey         string `json:"privateKey,omitempty"`
	Token              string `json:"token,omitempty"`
	EnterpriseBaseURL  string `json:"enterpriseBaseURL,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
}

func parseService(rest, value string) (*service, error) {
	typ, name, named := strings.Cut(rest, ".")
	if !named {
		name = typ
	}
	s := &service{name: name, typ: typ}
	var err error
	switch typ {
	case TypeWebhook:
		if !named || name == "" {
			return nil, fmt.Errorf("a webhook service is named: service.webhook.<name>")
		}
		s.webhook = &WebhookOptions{}
		if err = yaml.UnmarshalStrict([]byte(value), s.webhook); err == nil && s.webhook.URL == "" {
			err = fmt.Errorf("url is empty; give the URL requests go to")
		}
	case TypeSlack:
		s.slack = &SlackOptions{}
		if err = yaml.UnmarshalStrict([]byte(value), s.slack); err == nil && s.slack.Token == "" && s.slack.WebhookURL == "" {
			err = fmt.Errorf("give token (a bot token, $secret) or webhookURL (an incoming webhook)")
		}
	case TypeGitHub:
		s.github = &GitHubOptions{}
		if err = yaml.UnmarshalStrict([]byte(value), s.github); err == nil {
			g := s.github
			app := g.AppID != nil || g.InstallationID != nil || g.PrivateKey != ""
			switch {
			case app && g.Token != "":
				err = fmt.Errorf("give either appID, installationID and privateKey (a GitHub App) or token, not both")
			case app && (g.AppID == nil || g.InstallationID == nil || g.PrivateKey == ""):
				err = fmt.Errorf("a GitHub App needs appID, installationID and privateKey")
			case !app && g.Token == "":
				err = fmt.Errorf("give appID, installationID and privateKey (a GitHub App) or token")
			}
		}
	default:
		return nil, fmt.Errorf("service type %q: Ferry sends through webhook, slack and github; remove this service from the file given to Ferry", typ)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// secretRef is a $key in a service's value.
var secretRef = regexp.MustCompile(`\$[A-Za-z0-9_-]+`)

// strings are pointers to every string field of the service's options,
// for resolving and checking $secret references.
func (s *service) fields() []*string {
	switch {
	case s.webhook != nil:
		w := s.webhook
		f := []*string{&w.URL}
		for i := range w.Headers {
			f = append(f, &w.Headers[i].Name, &w.Headers[i].Value)
		}
		if w.BasicAuth != nil {
			f = append(f, &w.BasicAuth.Username, &w.BasicAuth.Password)
		}
		return f
	case s.slack != nil:
		return []*string{&s.slack.Token, &s.slack.APIURL, &s.slack.WebhookURL, &s.slack.Username, &s.slack.Icon, &s.slack.SigningSecret}
	case s.github != nil:
		return []*string{&s.github.PrivateKey, &s.github.Token, &s.github.EnterpriseBaseURL}
	}
	return nil
}

// resolved is a copy of the service with its $secret references replaced.
func (s *service) resolved(secrets *Secrets) (*service, error) {
	c := *s
	switch {
	case s.webhook != nil:
		w := *s.webhook
		w.Headers = append([]Header(nil), w.Headers...)
		if w.BasicAuth != nil {
			b := *w.BasicAuth
			w.BasicAuth = &b
		}
		c.webhook = &w
	case s.slack != nil:
		sl := *s.slack
		c.slack = &sl
	case s.github != nil:
		g := *s.github
		c.github = &g
	}
	var missing []string
	for _, f := range c.fields() {
		*f = secretRef.ReplaceAllStringFunc(*f, func(ref string) string {
			v, ok := secrets.lookup(ref[1:])
			if !ok {
				missing = append(missing, ref)
			}
			return v
		})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("service %q: %s not found: %s", s.name, strings.Join(missing, ", "), secrets.where(missing))
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
