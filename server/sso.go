package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/accounts"
	"github.com/ferry-gitops/ferry/internal/tokens"
)

// oidcConfig is argocd-cm's oidc.config, the part Ferry reads.
type oidcConfig struct {
	Name            string   `json:"name"`
	Issuer          string   `json:"issuer"`
	ClientID        string   `json:"clientID"`
	ClientSecret    string   `json:"clientSecret"`
	RequestedScopes []string `json:"requestedScopes"`
}

// sso is the login through the OIDC provider of argocd-cm's oidc.config:
// the authorization code flow with PKCE, its state kept here for ten
// minutes and bound to the browser by a cookie.
type sso struct {
	mu       sync.Mutex
	key      string // the config the provider was made from
	provider *oidc.Provider
	pending  map[string]pendingLogin
}

type pendingLogin struct {
	verifier, nonce, returnTo string
	until                     time.Time
}

const stateCookie = "ferry.oauth.state"

// ssoConfig reads oidc.config, with a clientSecret of $KEY (a key of
// argocd-secret) or $SECRET:KEY (a key of another Secret of the control
// namespace) resolved, and the redirect URL.
func (s *server) ssoConfig(ctx context.Context) (*oidcConfig, string, error) {
	cm := s.live.configMap(accounts.ConfigMapName)
	raw := strings.TrimSpace(cm["oidc.config"])
	if raw == "" {
		return nil, "", errors.New("SSO is not configured: set oidc.config in argocd-cm")
	}
	var c oidcConfig
	if err := yaml.Unmarshal([]byte(raw), &c); err != nil {
		return nil, "", fmt.Errorf("argocd-cm oidc.config is no YAML of issuer, clientID, clientSecret: %v", err)
	}
	if c.Issuer == "" || c.ClientID == "" {
		return nil, "", errors.New("argocd-cm oidc.config: give issuer and clientID")
	}
	if ref, ok := strings.CutPrefix(c.ClientSecret, "$"); ok {
		secret, key := accounts.SecretName, ref
		if name, k, ok := strings.Cut(ref, ":"); ok {
			secret, key = name, k
		}
		sec, err := s.kube.CoreV1().Secrets(s.cfg.controlNamespace).Get(ctx, secret, metav1.GetOptions{})
		if err != nil || len(sec.Data[key]) == 0 {
			return nil, "", fmt.Errorf("argocd-cm oidc.config clientSecret %s: no key %q in secret %s/%s", c.ClientSecret, key, s.cfg.controlNamespace, secret)
		}
		c.ClientSecret = string(sec.Data[key])
	}
	if len(c.RequestedScopes) == 0 {
		c.RequestedScopes = []string{oidc.ScopeOpenID, "profile", "email", "groups"}
	}
	base := s.cfg.url
	if base == "" {
		base = cm["url"]
	}
	if base == "" {
		base = "https://" + s.cfg.listen
	}
	return &c, strings.TrimSuffix(base, "/") + "/auth/callback", nil
}

// oauth is the provider and the OAuth2 config of the current oidc.config.
func (s *server) oauth(ctx context.Context) (*oidc.Provider, *oauth2.Config, *oidcConfig, error) {
	c, redirect, err := s.ssoConfig(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s.sso.mu.Lock()
	defer s.sso.mu.Unlock()
	if key := c.Issuer + "\x00" + c.ClientID; s.sso.provider == nil || s.sso.key != key {
		p, err := oidc.NewProvider(ctx, c.Issuer)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("the OIDC provider %s: %w", c.Issuer, err)
		}
		s.sso.provider, s.sso.key = p, key
	}
	return s.sso.provider, &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURL: redirect,
		Endpoint: s.sso.provider.Endpoint(), Scopes: c.RequestedScopes}, c, nil
}

// ssoLogin is GET /auth/login[?return_url=…]: to the provider's login.
// return_url is a path of this server, or a loopback http:// URL (the
// CLI's ferry login --sso), which then gets the token in its query.
func (s *server) ssoLogin(w http.ResponseWriter, r *http.Request) {
	_, oc, _, err := s.oauth(r.Context())
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	returnTo := r.URL.Query().Get("return_url")
	if returnTo == "" {
		returnTo = "/"
	}
	if !allowedReturn(returnTo) {
		fail(w, http.StatusBadRequest, "return_url %q: give a path of this server, or http://localhost:PORT/… or http://127.0.0.1:PORT/… (the CLI)", returnTo)
		return
	}
	state, nonce, verifier := tokens.NewID(), tokens.NewID(), oauth2.GenerateVerifier()
	s.sso.mu.Lock()
	now := time.Now()
	for k, p := range s.sso.pending {
		if now.After(p.until) {
			delete(s.sso.pending, k)
		}
	}
	s.sso.pending[state] = pendingLogin{verifier: verifier, nonce: nonce, returnTo: returnTo, until: now.Add(10 * time.Minute)}
	s.sso.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: state, Path: "/auth/", MaxAge: 600, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, oc.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusFound)
}

func allowedReturn(u string) bool {
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		return true
	}
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "http" && (p.Hostname() == "localhost" || p.Hostname() == "127.0.0.1")
}

// ssoCallback is GET /auth/callback: the code traded for the ID token,
// which is checked (signature, issuer, audience, nonce), and a session of
// the user's subject, email and groups.
func (s *server) ssoCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cookie, err := r.Cookie(stateCookie)
	state := q.Get("state")
	s.sso.mu.Lock()
	pl, ok := s.sso.pending[state]
	delete(s.sso.pending, state)
	s.sso.mu.Unlock()
	if err != nil || cookie.Value != state || !ok || time.Now().After(pl.until) {
		fail(w, http.StatusBadRequest, "this login is unknown or older than 10 minutes: start again at /auth/login")
		return
	}
	if e := q.Get("error"); e != "" {
		fail(w, http.StatusUnauthorized, "the OIDC provider refused the login: %s", e)
		return
	}
	provider, oc, c, err := s.oauth(r.Context())
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	tok, err := oc.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(pl.verifier))
	if err != nil {
		fail(w, http.StatusUnauthorized, "the OIDC provider did not take the code: %v", err)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: c.ClientID}).Verify(r.Context(), raw)
	if err != nil || idt.Nonce != pl.nonce {
		fail(w, http.StatusUnauthorized, "the ID token is not valid for this login")
		return
	}
	var claims struct {
		Email  string   `json:"email"`
		Groups []string `json:"groups"`
	}
	if err := idt.Claims(&claims); err != nil {
		fail(w, http.StatusUnauthorized, "the ID token's claims: %v", err)
		return
	}
	session, _, err := s.signer.Issue(tokens.KindSSO, idt.Subject, s.cfg.sessionTTL, func(cl *tokens.Claims) {
		cl.Email, cl.Groups = claims.Email, claims.Groups
	})
	if err != nil {
		fail(w, http.StatusInternalServerError, "sign the session: %v", err)
		return
	}
	s.audit.record(auditEntry{User: claims.Email, Groups: claims.Groups, Source: source(r), Resource: "session", Action: "create", Allowed: true, Reason: "SSO " + c.Issuer})
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/auth/", MaxAge: -1, HttpOnly: true, Secure: true})
	if strings.HasPrefix(pl.returnTo, "http://") {
		u, _ := url.Parse(pl.returnTo)
		v := u.Query()
		v.Set("token", session)
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
		return
	}
	setTokenCookie(w, session, s.cfg.sessionTTL)
	http.Redirect(w, r, pl.returnTo, http.StatusFound)
}
