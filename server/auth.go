package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/accounts"
	"github.com/ferry-gitops/ferry/internal/rbac"
	"github.com/ferry-gitops/ferry/internal/tokens"
)

// TokenCookie is the cookie that carries a browser's session token, as
// Argo CD names it.
const TokenCookie = "argocd.token"

// caller is who made a request, once authenticated.
type caller struct {
	claims *tokens.Claims
	who    rbac.Who
	source string
}

// name is the caller's name in logs, Events and initiatedBy: the account,
// the SSO user's email (else subject), or the project role.
func (c *caller) name() string {
	if c.claims.Kind == tokens.KindSSO && c.claims.Email != "" {
		return c.claims.Email
	}
	return c.claims.Subject
}

// bearer is the request's token: the Authorization header's bearer, else
// the cookie.
func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
		return ""
	}
	if c, err := r.Cookie(TokenCookie); err == nil {
		return c.Value
	}
	return ""
}

// source is the address the request came from.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// authenticate finds the caller of r, or answers 401 and returns nil. A
// 401 says nothing of why the token was refused.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request) *caller {
	c, ok := s.identify(r.Context(), bearer(r))
	if !ok {
		fail(w, http.StatusUnauthorized, "no session: log in (POST /api/v1/session, or ferry login) and send the token as Authorization: Bearer TOKEN")
		return nil
	}
	c.source = source(r)
	return c
}

// identify checks a token and what revokes it: a session ends with a
// password change after it, an API key with its id's removal from the
// account, a project role token with its id's removal from the role.
func (s *server) identify(ctx context.Context, token string) (*caller, bool) {
	if token == "" {
		return nil, false
	}
	claims, err := s.signer.Verify(token)
	if err != nil {
		return nil, false
	}
	accts, _ := s.live.snapshot()
	c := &caller{claims: claims, who: rbac.Who{Subject: claims.Subject}}
	switch claims.Kind {
	case tokens.KindSession:
		a := accts[claims.Subject]
		if a == nil || !a.Enabled || claims.IssuedAt.Time.Before(a.PasswordMtime.Truncate(time.Second)) {
			return nil, false
		}
	case tokens.KindAPIKey:
		a := accts[claims.Subject]
		if a == nil || !a.Enabled || !a.Can(accounts.CapAPIKey) || !a.HasToken(claims.ID) {
			return nil, false
		}
	case tokens.KindSSO:
		c.who.Claims = map[string][]string{"groups": claims.Groups, "email": {claims.Email}}
	case tokens.KindProject:
		if !s.projectTokenValid(ctx, claims) {
			return nil, false
		}
	}
	return c, true
}

// authorize decides r for the caller: true when allowed. A denial is
// answered 403, naming the action and the object (not the policy), and
// written to the audit log; so is an allowed change (change true).
func (s *server) authorize(w http.ResponseWriter, c *caller, req rbac.Request, change bool) bool {
	_, en := s.live.snapshot()
	d := en.Decide(c.who, req)
	if !d.Allowed || change {
		entry := auditEntry{User: c.name(), Groups: c.claims.Groups, Source: c.source, Resource: req.Resource,
			Action: req.Action, Object: req.Object, Allowed: d.Allowed, Reason: "allowed by the policy of " + d.By}
		if !d.Allowed {
			entry.Reason = "no policy line of " + strings.Join(en.Subjects(c.who), ", ") + " allows it"
		}
		s.audit.record(entry)
	}
	if !d.Allowed {
		fail(w, http.StatusForbidden, "permission denied: %s %s %s (user %s)", req.Action, req.Resource, req.Object, c.name())
	}
	return d.Allowed
}
