package app

import (
	"fmt"
	"strconv"
	"strings"
)

// ProjectRole is Argo CD's project role (spec.roles[]): casbin policy lines
// on the project's own objects, granted to the OIDC groups listed and to
// every JWT token issued for the role whose id is still listed.
type ProjectRole struct {
	// Name is the role's: letters, digits, '-' and '_'; its subject in
	// policies is proj:<project>:<name>.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Policies are casbin lines: p, proj:<project>:<role>, <resource>,
	// <action>, <project>/<object>, allow|deny. The resource is
	// applications, applicationsets, clusters, exec, logs or repositories.
	Policies []string `json:"policies,omitempty"`
	// JWTTokens are the tokens issued for the role that are still valid:
	// deleting one revokes it.
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
	// Groups are OIDC group claims bound to the role.
	Groups []string `json:"groups,omitempty"`
}

// JWTToken is one token issued for a project role: when it was issued and
// expires (Unix seconds; 0 never), and its id, the token's jti claim.
type JWTToken struct {
	// IssuedAt is the token's iat, in Unix seconds.
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is the token's exp, in Unix seconds; 0 or left out, it
	// does not expire.
	ExpiresAt int64 `json:"exp,omitempty"`
	// ID is the token's jti; a token listed without one is known by its
	// iat, as Argo CD's first tokens were.
	ID string `json:"id,omitempty"`
}

// TokenID is the token's id. A token Argo CD issued before tokens had ids
// is known by its issue time in decimal, as Argo CD itself names it.
func (t JWTToken) TokenID() string {
	if t.ID != "" {
		return t.ID
	}
	return strconv.FormatInt(t.IssuedAt, 10)
}

// JWTTokens is a list of tokens, as Argo CD's status.jwtTokensByRole holds
// them.
type JWTTokens struct {
	Items []JWTToken `json:"items,omitempty"`
}

// ProjectStatus is the status Argo CD's API server returns with a project.
// Ferry keeps no status for a project (ParseProject drops a status as it
// drops any field an API server writes): TokenStatus derives it from the
// roles, for an API that answers in Argo CD's shape.
type ProjectStatus struct {
	JWTTokensByRole map[string]JWTTokens `json:"jwtTokensByRole,omitempty"`
}

// Role returns the project's role of that name.
func (p *AppProject) Role(name string) (*ProjectRole, bool) {
	for i := range p.Spec.Roles {
		if p.Spec.Roles[i].Name == name {
			return &p.Spec.Roles[i], true
		}
	}
	return nil, false
}

// RoleSubject is the casbin subject of a project role, proj:<project>:<role>:
// the subject of its policy lines and of its tokens.
func RoleSubject(project, role string) string {
	return "proj:" + project + ":" + role
}

// TokenIssued reports whether a token with that id (its jti) issued for
// the role is still valid as far as the project is concerned: the id is
// listed in the role's jwtTokens. Its signature and exp are the server's
// to check.
func (p *AppProject) TokenIssued(role, id string) bool {
	r, ok := p.Role(role)
	if !ok || id == "" {
		return false
	}
	for _, t := range r.JWTTokens {
		if t.TokenID() == id {
			return true
		}
	}
	return false
}

// PolicyLines are the casbin lines of all the project's roles, for an RBAC
// enforcer, as Argo CD builds them for a project: for each role, a
// "p, proj:<project>:<role>, projects, get, <project>, allow" line (every
// role may read its project), its policies with their fields trimmed,
// then a "g, <group>, proj:<project>:<role>" line for each group.
//
// Argo CD evaluates a project's lines only for requests on the project's
// objects, so a line whose object is "*" grants the project's objects
// alone: it is written here as <project>/*, so that lines of many projects
// loaded into one enforcer grant no more than that. Call it on a project
// ValidateProject accepted.
func (p *AppProject) PolicyLines() []string {
	var lines []string
	name := p.Metadata.Name
	for _, r := range p.Spec.Roles {
		sub := RoleSubject(name, r.Name)
		lines = append(lines, fmt.Sprintf("p, %s, projects, get, %s, allow", sub, name))
		for _, policy := range r.Policies {
			fields := policyFields(policy)
			if len(fields) == 6 && fields[4] == "*" {
				fields[4] = name + "/*"
			}
			lines = append(lines, strings.Join(fields, ", "))
		}
		for _, g := range r.Groups {
			lines = append(lines, fmt.Sprintf("g, %s, %s", g, sub))
		}
	}
	return lines
}

// TokenStatus is the status.jwtTokensByRole Argo CD would show for the
// project: each role's tokens, for the roles that have any.
func (p *AppProject) TokenStatus() ProjectStatus {
	var s ProjectStatus
	for _, r := range p.Spec.Roles {
		if len(r.JWTTokens) == 0 {
			continue
		}
		if s.JWTTokensByRole == nil {
			s.JWTTokensByRole = map[string]JWTTokens{}
		}
		s.JWTTokensByRole[r.Name] = JWTTokens{Items: append([]JWTToken(nil), r.JWTTokens...)}
	}
	return s
}

// policyFields splits a policy line at its commas and trims the spaces
// around each field, as Argo CD reads it.
func policyFields(policy string) []string {
	fields := strings.Split(policy, ",")
	for i, f := range fields {
		fields[i] = strings.Trim(f, " ")
	}
	return fields
}
