package rbac

import (
	"fmt"
	"slices"
	"strings"

	"github.com/casbin/casbin/v2"
)

// Who is who asks: a local account, an SSO user, or a project role's
// token.
type Who struct {
	// Subject is the account name, the SSO user's subject, or a project
	// role token's proj:PROJECT:ROLE.
	Subject string
	// Claims are the token's other claims whose values may be subjects
	// (groups, email…): those Policy.Scopes names count.
	Claims map[string][]string
}

// Request is what is asked: Argo CD's resource, action and object
// ("project/app", or "project/namespace/app" for an app outside the
// control namespace).
type Request struct {
	Resource, Action, Object string
}

func (r Request) String() string { return r.Action + " " + r.Resource + " " + r.Object }

// Decision is an answer, with the subject that earned an allow.
type Decision struct {
	Allowed bool
	// By is the subject (the user, a group, or the default role) whose
	// lines allowed the request; empty when denied.
	By string
}

// Enforcer answers requests with one policy and the project roles it was
// built with. It is immutable: a new policy builds a new Enforcer.
type Enforcer struct {
	policy *Policy
	e      *casbin.SyncedEnforcer
}

// ProjectLines are the p and g lines of AppProject roles: each role's
// policies as written, and g, GROUP, proj:PROJECT:ROLE for its groups.
type ProjectLines struct {
	P, G [][]string
}

// New builds an Enforcer of policy (nil: no lines, no default role) and
// the projects' role lines.
func New(policy *Policy, projects ProjectLines) (*Enforcer, error) {
	if policy == nil {
		policy = &Policy{Scopes: []string{"groups"}}
	}
	m, err := newModel()
	if err != nil {
		return nil, err
	}
	e, err := casbin.NewSyncedEnforcer(m)
	if err != nil {
		return nil, err
	}
	mt := &matcher{regex: policy.Regex}
	e.AddFunction("match", func(args ...any) (any, error) {
		v, _ := args[0].(string)
		pat, _ := args[1].(string)
		return mt.match(v, pat), nil
	})
	p, g := builtin()
	for _, l := range policy.Lines {
		if l.Kind == "p" {
			p = append(p, l.Fields)
		} else {
			g = append(g, l.Fields)
		}
	}
	p, g = append(p, projects.P...), append(g, projects.G...)
	if _, err := e.AddPolicies(dedupe(p)); err != nil {
		return nil, fmt.Errorf("load the policy lines: %w", err)
	}
	if _, err := e.AddGroupingPolicies(dedupe(g)); err != nil {
		return nil, fmt.Errorf("load the role bindings: %w", err)
	}
	return &Enforcer{policy: policy, e: e}, nil
}

// dedupe drops repeated lines, which casbin refuses in one batch.
func dedupe(rules [][]string) [][]string {
	seen := make(map[string]bool, len(rules))
	out := rules[:0:0]
	for _, r := range rules {
		k := strings.Join(r, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// Subjects are the names w is known by to the policy: its subject, the
// values of its scoped claims, and the default role, in that order.
func (en *Enforcer) Subjects(w Who) []string {
	subs := []string{w.Subject}
	for _, scope := range en.policy.Scopes {
		for _, v := range w.Claims[scope] {
			if v != "" && !slices.Contains(subs, v) {
				subs = append(subs, v)
			}
		}
	}
	if en.policy.Default != "" {
		subs = append(subs, en.policy.Default)
	}
	return subs
}

// Decide answers r for w: allowed when one of w's subjects is, as Argo CD
// tries the user, then each group, then the default role.
func (en *Enforcer) Decide(w Who, r Request) Decision {
	for _, sub := range en.Subjects(w) {
		if sub == "" {
			continue
		}
		ok, err := en.e.Enforce(sub, r.Resource, r.Action, r.Object)
		if err == nil && ok {
			return Decision{Allowed: true, By: sub}
		}
	}
	return Decision{}
}

// Allowed is Decide's answer alone.
func (en *Enforcer) Allowed(w Who, r Request) bool { return en.Decide(w, r).Allowed }
