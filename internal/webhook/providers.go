package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
)

// Event labels, as ferry_webhook_requests_total shows them. Every other
// event a provider may send is "other" (and answered 400), so the label
// cannot grow with what a client puts in a header.
const (
	eventPush    = "push"
	eventTagPush = "tag_push"
	eventPing    = "ping"
	eventOther   = "other"
	eventNone    = "none"
)

// provider is what the receiver knows of one Git provider.
type provider struct {
	name Provider
	// eventHeader names the event of a delivery; its presence picks the provider.
	eventHeader string
	// events maps the header's values Ferry handles to their labels.
	events map[string]string
	// verify checks a delivery's signature or token against secret.
	verify func(secret string, h http.Header, body []byte) error
	// parse reads a push or tag push payload (JSON).
	parse func(payload []byte) ([]Push, error)
}

var providers = map[Provider]*provider{
	GitHub: {
		name: GitHub, eventHeader: "X-GitHub-Event",
		events: map[string]string{"push": eventPush, "ping": eventPing},
		verify: verifyHMACHeader("X-Hub-Signature-256", "sha256="),
		parse:  parseGitHub,
	},
	GitLab: {
		name: GitLab, eventHeader: "X-Gitlab-Event",
		events: map[string]string{"Push Hook": eventPush, "Tag Push Hook": eventTagPush},
		verify: verifyGitLabToken,
		parse:  parseGitLab,
	},
	Bitbucket: {
		name: Bitbucket, eventHeader: "X-Event-Key",
		events: map[string]string{"repo:push": eventPush, "diagnostics:ping": eventPing},
		verify: verifyHMACHeader("X-Hub-Signature", "sha256="),
		parse:  parseBitbucket,
	},
	Gitea: {
		name: Gitea, eventHeader: "X-Gitea-Event",
		events: map[string]string{"push": eventPush},
		verify: verifyHMACHeader("X-Gitea-Signature", ""),
		parse:  parseGitea,
	},
}

// detect finds the provider of a delivery by its event header. Gitea sends
// GitHub's headers as well, so it is checked first.
func detect(h http.Header) (*provider, string) {
	for _, name := range Providers {
		p := providers[name]
		if v := h.Get(p.eventHeader); v != "" {
			return p, v
		}
	}
	return nil, ""
}

func (p *provider) eventLabel(event string) string {
	if l, ok := p.events[event]; ok {
		return l
	}
	return eventOther
}

// errMalformed marks a payload that is not what its provider sends.
var errMalformed = errors.New("malformed payload")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// jsonPayload returns the JSON of a delivery: the body itself, or its
// "payload" field when GitHub or Gitea was set to send a form.
func jsonPayload(contentType string, body []byte) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, malformed("form body: %v", err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return nil, malformed("form body has no payload field")
	}
	return []byte(payload), nil
}

func decode(payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return malformed("%v", err)
	}
	return nil
}
