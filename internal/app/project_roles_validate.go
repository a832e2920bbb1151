package app

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The checks of spec.roles follow Argo CD's ValidateProject (role names,
// groups, policies), which Argo CD's API server runs on every project it
// is given, with one exception: a policy whose object is "*" is accepted,
// as Argo CD honours it when the project is applied with kubectl (it
// evaluates a project's lines only for the project's own objects, so "*"
// grants those alone; PolicyLines writes it as <project>/*).

var roleNameRE = regexp.MustCompile(`^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// projectRoleResources are the resources a project role may be granted,
// as in Argo CD (its rbac.ProjectScoped).
var projectRoleResources = []string{"applications", "applicationsets", "clusters", "exec", "logs", "repositories"}

// roleActions are the actions Argo CD accepts in a project role's policy;
// besides them, action/…, update/… and delete/… (an action or a change on
// one of an app's resources).
var roleActions = []string{"get", "create", "update", "delete", "sync", "override", "rollback", "*"}

var roleActionPrefixes = []string{"action/", "update/", "delete/"}

const policyForm = "p, proj:%[1]s:%[2]s, <resource>, <action>, %[1]s/<object>, allow|deny, e.g. p, proj:%[1]s:%[2]s, applications, sync, %[1]s/*, allow"

func (v *validator) roles(p *AppProject) {
	seen := map[string]int{}
	for i, r := range p.Spec.Roles {
		field := fmt.Sprintf("spec.roles[%d]", i)
		switch {
		case r.Name == "":
			v.add(field+".name", "required: the role's name, e.g. ci or read-only")
		case !roleNameRE.MatchString(r.Name):
			v.add(field+".name", "%q is not a valid role name: use letters, digits, '-' and '_', starting and ending with a letter or digit, e.g. ci-deployer", r.Name)
		}
		if j, dup := seen[r.Name]; dup && r.Name != "" {
			v.add(field+".name", "role %q is already defined at spec.roles[%d]: give each role its own name, or merge the two", r.Name, j)
		} else {
			seen[r.Name] = i
		}
		v.rolePolicies(p.Metadata.Name, field, r)
		v.roleGroups(field, r.Groups)
		v.roleTokens(field, r.JWTTokens)
	}
}

func (v *validator) rolePolicies(project, field string, r ProjectRole) {
	for j, policy := range r.Policies {
		f := fmt.Sprintf("%s.policies[%d]", field, j)
		if k := slices.Index(r.Policies[:j], policy); k >= 0 {
			v.add(f, "repeats %s.policies[%d]: remove one", field, k)
			continue
		}
		fields := policyFields(policy)
		if len(fields) != 6 || fields[0] != "p" {
			v.add(f, "%q is not a policy line of 6 fields: write %s", policy, fmt.Sprintf(policyForm, project, r.Name))
			continue
		}
		sub, res, act, obj, eft := fields[1], fields[2], fields[3], fields[4], fields[5]
		if want := RoleSubject(project, r.Name); sub != want {
			v.add(f, "subject %q is not this role: write %s (a role's policies grant the role itself, in its own project)", sub, want)
		}
		if !slices.Contains(projectRoleResources, res) {
			v.add(f, "resource %q cannot be granted by a project role: write one of %s", res, strings.Join(projectRoleResources, ", "))
		}
		if !validRoleAction(act) {
			v.add(f, "action %q is not one Argo CD knows: write one of %s, or action/<group>/<kind>/<name>, update/<group>/<kind>/<ns>/<name>, delete/<group>/<kind>/<ns>/<name>",
				act, strings.Join(roleActions, ", "))
		}
		if obj != "*" && !roleObjectRE(project).MatchString(obj) {
			v.add(f, "object %q is not one of project %s's: write %[2]s/*, %[2]s/<app> or %[2]s/<namespace>/<app>", obj, project)
		}
		if eft != "allow" && eft != "deny" {
			v.add(f, "effect %q is neither allow nor deny: write allow or deny as the last field", eft)
		}
	}
}

func validRoleAction(act string) bool {
	if slices.Contains(roleActions, act) {
		return true
	}
	for _, prefix := range roleActionPrefixes {
		if strings.HasPrefix(act, prefix) {
			return true
		}
	}
	return false
}

// roleObjectRE matches <project>[/<namespace>]/<app>, each a name or glob
// of word characters, '-', '.' and '*'.
func roleObjectRE(project string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(project) + `(/[*\w.-]+)?/[*\w.-]+$`)
}

func (v *validator) roleGroups(field string, groups []string) {
	for j, g := range groups {
		f := fmt.Sprintf("%s.groups[%d]", field, j)
		if k := slices.Index(groups[:j], g); k >= 0 {
			v.add(f, "group %q repeats %s.groups[%d]: remove one", g, field, k)
			continue
		}
		name := strings.TrimSpace(g)
		quoted := len(name) > 1 && strings.HasPrefix(name, `"`) && strings.HasSuffix(name, `"`)
		if quoted {
			name = name[1 : len(name)-1]
		}
		switch {
		case !quoted && strings.Contains(name, ","):
			v.add(f, "group %q has a comma: quote it, e.g. '\"%s\"', so that the policy reads it as one group", g, name)
		case name == "":
			v.add(f, "empty: write the name of an OIDC group, as your identity provider puts it in the groups claim")
		case strings.ContainsAny(name, "\"\n\r\t"):
			v.add(f, "group %q contains a quote, tab or line break: remove them", g)
		case strings.IndexFunc(g, unicode.IsSpace) == 0 || strings.LastIndexFunc(g, unicode.IsSpace) == len(g)-1:
			v.add(f, "group %q starts or ends with a space: remove the space", g)
		}
	}
}

func (v *validator) roleTokens(field string, tokens []JWTToken) {
	seen := map[string]int{}
	for j, t := range tokens {
		f := fmt.Sprintf("%s.jwtTokens[%d]", field, j)
		if k, dup := seen[t.TokenID()]; dup {
			v.add(f+".id", "token id %q is already listed at %s.jwtTokens[%d]: remove one (a token's id is its jti)", t.TokenID(), field, k)
			continue
		}
		seen[t.TokenID()] = j
	}
}
