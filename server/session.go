package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/ferry-gitops/ferry/internal/accounts"
	"github.com/ferry-gitops/ferry/internal/rbac"
	"github.com/ferry-gitops/ferry/internal/tokens"
)

// sessionCreate is POST /api/v1/session: a local account's username and
// password for a session token, as Argo CD's SessionCreateRequest.
func (s *server) sessionCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	src := source(r)
	if ok, wait := s.limiter.Allow(req.Username, src); !ok {
		s.audit.record(auditEntry{User: req.Username, Source: src, Resource: "session", Action: "create", Reason: "too many failed logins"})
		fail(w, http.StatusTooManyRequests, "too many failed logins: try again in %s", wait.Round(time.Second))
		return
	}
	accts, _ := s.live.snapshot()
	if err := accounts.Login(accts, req.Username, req.Password); err != nil {
		s.limiter.Failed(req.Username, src)
		s.audit.record(auditEntry{User: req.Username, Source: src, Resource: "session", Action: "create", Reason: "wrong username or password"})
		fail(w, http.StatusUnauthorized, "invalid username or password")
		return
	}
	s.limiter.Succeeded(req.Username)
	token, _, err := s.signer.Issue(tokens.KindSession, req.Username, s.cfg.sessionTTL, nil)
	if err != nil {
		fail(w, http.StatusInternalServerError, "sign the session: %v", err)
		return
	}
	s.audit.record(auditEntry{User: req.Username, Source: src, Resource: "session", Action: "create", Allowed: true, Reason: "password"})
	setTokenCookie(w, token, s.cfg.sessionTTL)
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
}

func setTokenCookie(w http.ResponseWriter, token string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: token, Path: "/", MaxAge: int(ttl.Seconds()),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

// sessionDelete is DELETE /api/v1/session: the browser's cookie is
// cleared (a token itself ends with its time).
func (s *server) sessionDelete(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true})
	writeJSON(w, http.StatusOK, map[string]any{})
}

// userInfo is GET /api/v1/session/userinfo, as Argo CD's GetUserInfoResponse.
func (s *server) userInfo(w http.ResponseWriter, r *http.Request) {
	c, ok := s.identify(r.Context(), bearer(r))
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"loggedIn": false})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"loggedIn": true, "username": c.name(), "iss": c.claims.Issuer, "groups": c.claims.Groups})
}

// accountPassword is PUT /api/v1/account/password: the caller's current
// password, and a new one for their own account or, when the policy lets
// them update accounts, for the account name.
func (s *server) accountPassword(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	var req struct {
		Name            string `json:"name"`
		CurrentPassword string `json:"currentPassword"`
		NewPassword     string `json:"newPassword"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Name == "" {
		req.Name = c.claims.Subject
	}
	if c.claims.Kind != tokens.KindSession {
		fail(w, http.StatusForbidden, "only a local account's login may change passwords: log in with a username and password")
		return
	}
	if req.Name != c.claims.Subject && !s.authorize(w, c, rbac.Request{Resource: "accounts", Action: "update", Object: req.Name}, true) {
		return
	}
	accts, _ := s.live.snapshot()
	if accounts.Login(accts, c.claims.Subject, req.CurrentPassword) != nil {
		fail(w, http.StatusUnauthorized, "currentPassword is not the password of %s", c.claims.Subject)
		return
	}
	if accts[req.Name] == nil {
		fail(w, http.StatusNotFound, "account %q not found: declare it in argocd-cm as accounts.%s", req.Name, req.Name)
		return
	}
	hash, err := accounts.Hash(req.NewPassword)
	if err != nil {
		fail(w, http.StatusBadRequest, "newPassword: %v", err)
		return
	}
	if err := s.store.SetPassword(r.Context(), req.Name, hash); err != nil {
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.live.waitForAccounts(r.Context(), func(accts map[string]*accounts.Account) bool {
		return accts[req.Name] != nil && bytes.Equal(accts[req.Name].PasswordHash, hash)
	})
	s.audit.record(auditEntry{User: c.name(), Source: c.source, Resource: "accounts", Action: "update", Object: req.Name, Allowed: true, Reason: "password changed"})
	writeJSON(w, http.StatusOK, map[string]any{})
}

// accountToken is POST /api/v1/account/{name}/token: a new API key of an
// account with the apiKey capability, for whoever may update accounts
// (or the account itself), as Argo CD's CreateTokenRequest.
func (s *server) accountToken(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	name := r.PathValue("name")
	var req struct {
		ExpiresIn json.Number `json:"expiresIn"`
		ID        string      `json:"id"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	expiresIn, err := seconds(req.ExpiresIn)
	if err != nil {
		fail(w, http.StatusBadRequest, "expiresIn %q: write the key's lifetime in seconds (0: no end)", req.ExpiresIn)
		return
	}
	self := c.claims.Kind == tokens.KindSession && c.claims.Subject == name
	if !self && !s.authorize(w, c, rbac.Request{Resource: "accounts", Action: "update", Object: name}, true) {
		return
	}
	accts, _ := s.live.snapshot()
	a := accts[name]
	switch {
	case a == nil:
		fail(w, http.StatusNotFound, "account %q not found: declare it in argocd-cm as accounts.%s: apiKey", name, name)
		return
	case !a.Can(accounts.CapAPIKey):
		fail(w, http.StatusBadRequest, "account %q has no apiKey capability: add it in argocd-cm (accounts.%s: apiKey, login)", name, name)
		return
	}
	token, claims, err := s.signer.Issue(tokens.KindAPIKey, name, expiresIn, func(cl *tokens.Claims) {
		if req.ID != "" {
			cl.ID = req.ID
		}
	})
	if err == nil && a.HasToken(claims.ID) {
		fail(w, http.StatusConflict, "account %q has a token with id %q already", name, claims.ID)
		return
	}
	rec := accounts.Token{ID: claims.ID, IssuedAt: claims.IssuedAt.Unix()}
	if claims.ExpiresAt != nil {
		rec.ExpiresAt = claims.ExpiresAt.Unix()
	}
	if err == nil {
		err = s.store.AddToken(r.Context(), name, rec)
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.live.waitForAccounts(r.Context(), func(accts map[string]*accounts.Account) bool {
		return accts[name] != nil && accts[name].HasToken(claims.ID)
	})
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
}
