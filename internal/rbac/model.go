// Package rbac decides who may do what, with Argo CD's policy language:
// argocd-rbac-cm's policy.csv lines (p, SUBJECT, RESOURCE, ACTION, OBJECT,
// allow|deny and g, USER-OR-GROUP, ROLE), its default role, scopes and
// match mode, plus the policies and groups of AppProject roles. casbin,
// the library Argo CD uses, evaluates them; this package parses and checks
// the policy, keeps the last good one when an edit is wrong, and says who
// is asking (a local account, an SSO user and their groups, a project
// role's token).
package rbac

import (
	"regexp"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2/model"
	"github.com/gobwas/glob"
)

// modelText is the request, policy and matcher of the evaluation, as
// Argo CD's: a request is allowed when some policy line of one of its
// subject's roles allows it and none denies it.
const modelText = `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && match(r.res, p.res) && match(r.act, p.act) && match(r.obj, p.obj)
`

func newModel() (model.Model, error) { return model.NewModelFromString(modelText) }

// Resources are the resources policy lines may name, as Argo CD's.
var Resources = []string{
	"applications", "applicationsets", "clusters", "projects", "repositories",
	"write-repositories", "accounts", "certificates", "gpgkeys", "logs", "exec", "extensions",
}

// Actions are the actions policy lines may name; "action/…" (a resource
// action, action/GROUP/KIND/NAME), "update/…" and "delete/…" (on an app's
// resources) take a suffix.
var Actions = []string{"get", "create", "update", "delete", "sync", "override", "action", "invoke"}

// Builtin roles, as Argo CD has them: role:readonly may get everything,
// role:admin may do everything.
const (
	RoleReadonly = "role:readonly"
	RoleAdmin    = "role:admin"
)

// builtin are the lines of the builtin roles, and the admin account's
// binding to role:admin.
func builtin() (p, g [][]string) {
	for _, res := range Resources {
		switch res {
		case "exec", "extensions":
			continue
		}
		p = append(p, []string{RoleReadonly, res, "get", "*", "allow"})
	}
	p = append(p, []string{RoleAdmin, "*", "*", "*", "allow"})
	g = append(g, []string{RoleAdmin, RoleReadonly}, []string{"admin", RoleAdmin})
	return p, g
}

// matcher matches a request's value against a pattern of a policy line:
// globs (gobwas, "*" crossing "/") or, in regex match mode, anchored
// regular expressions. Compiled patterns are kept.
type matcher struct {
	regex bool
	cache sync.Map // pattern → func(string) bool
}

func (m *matcher) match(value, pattern string) bool {
	if f, ok := m.cache.Load(pattern); ok {
		return f.(func(string) bool)(value)
	}
	f := m.compile(pattern)
	m.cache.Store(pattern, f)
	return f(value)
}

func (m *matcher) compile(pattern string) func(string) bool {
	if m.regex {
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			return func(string) bool { return false }
		}
		return re.MatchString
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return func(v string) bool { return v == pattern }
	}
	return g.Match
}

// validPattern reports why pattern is no pattern of the mode, or "".
func validPattern(pattern string, regex bool) string {
	var err error
	if regex {
		_, err = regexp.Compile("^(?:" + pattern + ")$")
	} else {
		_, err = glob.Compile(pattern)
	}
	if err != nil {
		return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
	}
	return ""
}
