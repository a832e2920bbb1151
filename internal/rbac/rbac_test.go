package rbac

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustEnforcer(t *testing.T, data map[string]string, projects ProjectLines) *Enforcer {
	t.Helper()
	p, err := Parse(data)
	require.NoError(t, err)
	en, err := New(p, projects)
	require.NoError(t, err)
	return en
}

func TestTeamRoleBoundToAGroup(t *testing.T) {
	en := mustEnforcer(t, map[string]string{"policy.csv": `
p, role:team-a, applications, get, team-a/*, allow
p, role:team-a, applications, sync, team-a/*, allow
g, team-a, role:team-a
`}, ProjectLines{})
	alice := Who{Subject: "alice", Claims: map[string][]string{"groups": {"team-a"}}}
	assert.Equal(t, Decision{Allowed: true, By: "team-a"}, en.Decide(alice, Request{"applications", "sync", "team-a/web"}))
	assert.True(t, en.Allowed(alice, Request{"applications", "get", "team-a/apps/web"}), "an app outside the control namespace is project/namespace/app")
	assert.False(t, en.Allowed(alice, Request{"applications", "sync", "team-b/web"}))
	assert.False(t, en.Allowed(alice, Request{"applications", "delete", "team-a/web"}))
	assert.False(t, en.Allowed(Who{Subject: "bob", Claims: map[string][]string{"groups": {"team-b"}}}, Request{"applications", "get", "team-a/web"}))
}

func TestDefaultRoleAndBuiltins(t *testing.T) {
	en := mustEnforcer(t, map[string]string{"policy.default": "role:readonly", "policy.csv": "g, admin, role:admin"}, ProjectLines{})
	anyone := Who{Subject: "carol"}
	assert.Equal(t, Decision{Allowed: true, By: RoleReadonly}, en.Decide(anyone, Request{"applications", "get", "x/y"}))
	assert.False(t, en.Allowed(anyone, Request{"applications", "sync", "x/y"}))
	assert.True(t, en.Allowed(Who{Subject: "admin"}, Request{"accounts", "update", "carol"}))

	none := mustEnforcer(t, map[string]string{}, ProjectLines{})
	assert.False(t, none.Allowed(anyone, Request{"applications", "get", "x/y"}), "no default role: nothing")
}

func TestDenyWinsOverAllowOfTheSameSubject(t *testing.T) {
	en := mustEnforcer(t, map[string]string{"policy.csv": `
p, role:dev, applications, *, */*, allow
p, role:dev, applications, delete, prod/*, deny
g, dev, role:dev
`}, ProjectLines{})
	dev := Who{Subject: "dev"}
	assert.True(t, en.Allowed(dev, Request{"applications", "delete", "staging/web"}))
	assert.False(t, en.Allowed(dev, Request{"applications", "delete", "prod/web"}))
	assert.True(t, en.Allowed(dev, Request{"applications", "action/apps/Deployment/restart", "prod/web"}))
}

func TestScopesChooseTheClaims(t *testing.T) {
	data := map[string]string{"policy.csv": "p, carol@example.com, applications, get, */*, allow", "scopes": "[groups, email]"}
	en := mustEnforcer(t, data, ProjectLines{})
	carol := Who{Subject: "c123", Claims: map[string][]string{"email": {"carol@example.com"}}}
	assert.True(t, en.Allowed(carol, Request{"applications", "get", "a/b"}))
	delete(data, "scopes")
	en = mustEnforcer(t, data, ProjectLines{})
	assert.False(t, en.Allowed(carol, Request{"applications", "get", "a/b"}), "email is no subject unless scoped")
}

func TestRegexMatchMode(t *testing.T) {
	en := mustEnforcer(t, map[string]string{"policy.matchMode": "regex", "policy.csv": `p, alice, applications, (get|sync), team-[ab]/.*, allow`}, ProjectLines{})
	alice := Who{Subject: "alice"}
	assert.True(t, en.Allowed(alice, Request{"applications", "sync", "team-b/web"}))
	assert.False(t, en.Allowed(alice, Request{"applications", "delete", "team-b/web"}))
	assert.False(t, en.Allowed(alice, Request{"applications", "get", "team-c/web"}))
}

func TestProjectRoleLines(t *testing.T) {
	en := mustEnforcer(t, map[string]string{}, ProjectLines{
		P: [][]string{{"proj:team-a:ci", "applications", "sync", "team-a/*", "allow"}},
		G: [][]string{{"ops", "proj:team-a:ci"}},
	})
	assert.True(t, en.Allowed(Who{Subject: "proj:team-a:ci"}, Request{"applications", "sync", "team-a/web"}))
	assert.False(t, en.Allowed(Who{Subject: "proj:team-a:ci"}, Request{"applications", "sync", "team-b/web"}))
	assert.True(t, en.Allowed(Who{Subject: "dave", Claims: map[string][]string{"groups": {"ops"}}}, Request{"applications", "sync", "team-a/web"}))
}

func TestParseSaysEveryProblemWithItsLine(t *testing.T) {
	_, err := Parse(map[string]string{
		"policy.matchMode": "fuzzy",
		"policy.csv": `p, role:a, applications, get, */*, allow
p, role:a, application, get, */*, allow
p, role:a, applications, get, */*, permit
g, alice
x, y, z`,
		"policy.team.csv": "p, role:b, applications, get",
	})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{
		`policy.matchMode "fuzzy" is not a match mode: write glob or regex`,
		`policy.csv line 2: resource "application" is not one of applications, applicationsets, clusters, projects, repositories, write-repositories, accounts, certificates, gpgkeys, logs, exec, extensions`,
		`policy.csv line 3: effect "permit" is neither allow nor deny`,
		`policy.csv line 4: a g line has 2 fields after g: the user or group, and the role it has`,
		`policy.csv line 5: a line starts with p or g, not "x"`,
		`policy.team.csv line 1: a p line has 5 fields after p (subject, resource, action, object, allow|deny), this one 3`,
	}, pe.Problems)
}
