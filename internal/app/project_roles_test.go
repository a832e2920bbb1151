package app

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func parseRolesProject(t *testing.T, roles string) *AppProject {
	t.Helper()
	p, err := ParseProject([]byte(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-a
spec:
  sourceRepos: ["*"]
  destinations: [{name: "*", namespace: "*"}]
  roles:
` + roles))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateProjectRoles(t *testing.T) {
	p := parseRolesProject(t, `
  - name: ci
    description: deploys from CI
    policies:
    - p, proj:team-a:ci, applications, sync, team-a/*, allow
    - p,proj:team-a:ci,applications,get,team-a/web,allow
    - p, proj:team-a:ci, applications, action/apps/Deployment/restart, team-a/apps/web, allow
    - p, proj:team-a:ci, logs, get, team-a/*, deny
    - p, proj:team-a:ci, applications, *, *, allow
    groups: [team-a, '"a, b"']
    jwtTokens: [{iat: 1700000000, id: 7c4e}, {iat: 1700000100, exp: 1800000000}]
`)
	if err := ValidateProject(p); err != nil {
		t.Fatalf("valid roles refused: %v", err)
	}
	r, ok := p.Role("ci")
	if !ok || r.Description != "deploys from CI" || len(r.Policies) != 5 || r.JWTTokens[1].ExpiresAt != 1800000000 {
		t.Errorf("role ci read as %+v", r)
	}
}

// Each wrong input is named by its field path with what to write instead,
// and every problem of the file comes back at once.
func TestValidateProjectRolesRefusals(t *testing.T) {
	p := parseRolesProject(t, `
  - name: -ci
    policies:
    - p, proj:team-a:-ci, applications, sync, team-a/*, allow
  - name: deploy
    policies:
    - p, proj:team-b:deploy, applications, sync, team-b/*, allow
    - p, proj:team-a:deploy, applications, sync, team-a/*, permit
    - p, proj:team-a:deploy, projects, launch, team-a/*, allow
    - p, proj:team-a:deploy, applications, sync
    - p, proj:team-a:deploy, applications, sync, team-a/*, allow
    - p, proj:team-a:deploy, applications, sync, team-a/*, allow
    groups: [ops, ops, "a,b", " lead"]
    jwtTokens: [{iat: 1, id: x}, {iat: 2, id: x}, {iat: 5}, {iat: 6, id: "5"}]
  - name: deploy
`)
	err := ValidateProject(p)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a ValidationError", err)
	}
	want := []string{
		`appproject "team-a": `,
		`spec.roles[0].name: "-ci" is not a valid role name: use letters, digits, '-' and '_', starting and ending with a letter or digit`,
		`spec.roles[1].policies[0]: subject "proj:team-b:deploy" is not this role: write proj:team-a:deploy`,
		`spec.roles[1].policies[0]: object "team-b/*" is not one of project team-a's: write team-a/*, team-a/<app> or team-a/<namespace>/<app>`,
		`spec.roles[1].policies[1]: effect "permit" is neither allow nor deny: write allow or deny`,
		`spec.roles[1].policies[2]: resource "projects" cannot be granted by a project role: write one of applications, applicationsets, clusters, exec, logs, repositories`,
		`spec.roles[1].policies[2]: action "launch" is not one Argo CD knows`,
		`spec.roles[1].policies[3]: "p, proj:team-a:deploy, applications, sync" is not a policy line of 6 fields: write p, proj:team-a:deploy, <resource>, <action>, team-a/<object>, allow|deny`,
		`spec.roles[1].policies[5]: repeats spec.roles[1].policies[4]: remove one`,
		`spec.roles[1].groups[1]: group "ops" repeats spec.roles[1].groups[0]: remove one`,
		`spec.roles[1].groups[2]: group "a,b" has a comma: quote it`,
		`spec.roles[1].groups[3]: group " lead" starts or ends with a space`,
		`spec.roles[1].jwtTokens[1].id: token id "x" is already listed at spec.roles[1].jwtTokens[0]: remove one`,
		`spec.roles[1].jwtTokens[3].id: token id "5" is already listed at spec.roles[1].jwtTokens[2]`,
		`spec.roles[2].name: role "deploy" is already defined at spec.roles[1]: give each role its own name`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	// The first role's policy names the role as written; its one problem
	// is the name.
	for _, fe := range ve.Errors {
		if fe.Field == "spec.roles[0].policies[0]" {
			t.Errorf("a policy naming its own role was refused: %s", fe.Message)
		}
	}
	if got := len(ve.Errors); got != len(want)-1 {
		t.Errorf("%d errors, want %d:\n%v", got, len(want)-1, err)
	}
}

func TestProjectRoleHelpers(t *testing.T) {
	p := parseRolesProject(t, `
  - name: ci
    policies:
    - p,  proj:team-a:ci, applications, sync, team-a/*, allow
    - p, proj:team-a:ci, applications, get, *, allow
    groups: [team-a-ci]
    jwtTokens: [{iat: 1700000000, id: 7c4e}, {iat: 1600000000}]
  - name: viewers
    groups: [team-a, '"x, y"']
`)
	if err := ValidateProject(p); err != nil {
		t.Fatal(err)
	}
	if r, ok := p.Role("viewers"); !ok || r.Name != "viewers" {
		t.Errorf("Role(viewers) = %v, %t", r, ok)
	}
	if _, ok := p.Role("admin"); ok {
		t.Error("Role(admin) found a role the project does not have")
	}
	wantLines := []string{
		"p, proj:team-a:ci, projects, get, team-a, allow",
		"p, proj:team-a:ci, applications, sync, team-a/*, allow",
		"p, proj:team-a:ci, applications, get, team-a/*, allow",
		"g, team-a-ci, proj:team-a:ci",
		"p, proj:team-a:viewers, projects, get, team-a, allow",
		"g, team-a, proj:team-a:viewers",
		`g, "x, y", proj:team-a:viewers`,
	}
	if got := p.PolicyLines(); !slices.Equal(got, wantLines) {
		t.Errorf("PolicyLines() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	for _, tt := range []struct {
		role, id string
		want     bool
	}{
		{"ci", "7c4e", true},
		{"ci", "1600000000", true}, // listed without an id: known by its iat
		{"ci", "1700000000", false},
		{"ci", "revoked", false},
		{"ci", "", false},
		{"viewers", "7c4e", false},
		{"admin", "7c4e", false},
	} {
		if got := p.TokenIssued(tt.role, tt.id); got != tt.want {
			t.Errorf("TokenIssued(%q, %q) = %t, want %t", tt.role, tt.id, got, tt.want)
		}
	}
	// Revoking is deleting the token from the role.
	r, _ := p.Role("ci")
	r.JWTTokens = r.JWTTokens[1:]
	if p.TokenIssued("ci", "7c4e") {
		t.Error("a token deleted from the role is still issued")
	}
	st := p.TokenStatus()
	if len(st.JWTTokensByRole) != 1 || len(st.JWTTokensByRole["ci"].Items) != 1 || st.JWTTokensByRole["ci"].Items[0].IssuedAt != 1600000000 {
		t.Errorf("TokenStatus() = %+v, want ci's one remaining token", st)
	}
}
