package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// A delivery must be one provider's from its headers to its body, so that
// it cannot borrow what another provider's deliveries are trusted for (an
// unsigned provider's route for a signed provider's payload, say). These
// are the headers each provider sends that name it: its event header and
// its signature or token. Gitea (and Forgejo) send GitHub's and Gogs'
// copies of theirs as well.
var providerHeaders = map[Provider][]string{
	GitHub:    {"X-GitHub-Event", "X-Hub-Signature-256", "X-Hub-Signature"},
	GitLab:    {"X-Gitlab-Event", "X-Gitlab-Token"},
	Bitbucket: {"X-Event-Key", "X-Hub-Signature"},
	Gitea: {"X-Gitea-Event", "X-Gitea-Signature", "X-Gogs-Event", "X-Gogs-Signature",
		"X-GitHub-Event", "X-Hub-Signature-256", "X-Hub-Signature"},
}

// eventCopies are the event headers that repeat a provider's own.
var eventCopies = map[Provider][]string{Gitea: {"X-GitHub-Event", "X-Gogs-Event"}}

// bodyMarks are top-level fields of one provider's push payloads that the
// others' never have.
var bodyMarks = map[Provider][]string{
	GitHub:    {"forced", "base_ref", "compare"},
	GitLab:    {"object_kind", "project_id", "total_commits_count"},
	Bitbucket: {"push", "actor"},
	Gitea:     {"compare_url", "total_commits"},
}

// gitlabKinds is the object_kind of GitLab's payload for each event it
// sends Ferry.
var gitlabKinds = map[string]string{"Push Hook": "push", "Tag Push Hook": "tag_push"}

// checkHeaders refuses a delivery detected as p's that carries another
// provider's headers, or copies of p's event header that disagree.
func checkHeaders(p *provider, event string, h http.Header) error {
	own := providerHeaders[p.name]
	for _, other := range Providers {
		for _, name := range providerHeaders[other] {
			if other != p.name && !slices.Contains(own, name) && h.Get(name) != "" {
				return fmt.Errorf("the delivery has %s's event header %s and %s's header %s: "+
					"a delivery comes from one provider; send each provider's deliveries with its own headers only",
					p.name, p.eventHeader, other, name)
			}
		}
	}
	for _, name := range eventCopies[p.name] {
		if v := h.Get(name); v != "" && v != event {
			return fmt.Errorf("the delivery's %s %q and %s %q disagree: a delivery names one event", p.eventHeader, event, name, v)
		}
	}
	return nil
}

// checkBody refuses a payload shaped as another provider's than the one
// its headers name (a GitHub push sent with GitLab's X-Gitlab-Event, say),
// and a GitLab payload whose object_kind is not the header's event.
func checkBody(p *provider, event string, payload []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil {
		return malformed("%v", err)
	}
	for _, other := range Providers {
		if other == p.name {
			continue
		}
		for _, mark := range bodyMarks[other] {
			if _, ok := fields[mark]; ok {
				return fmt.Errorf("%w: the body has field %q of a %s payload, but the headers name %s (%s): "+
					"send each provider's payloads with its own headers", errMalformed, mark, other, p.name, p.eventHeader)
			}
		}
	}
	if want, ok := gitlabKinds[event]; ok && p.name == GitLab {
		var kind string
		_ = json.Unmarshal(fields["object_kind"], &kind)
		if kind != want {
			return fmt.Errorf("%w: object_kind is %q, and a GitLab %s has %q", errMalformed, kind, event, want)
		}
	}
	return nil
}
