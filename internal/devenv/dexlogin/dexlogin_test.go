package dexlogin_test

import (
	"context"
	"crypto/rand"
	"flag"
	"net"
	"os"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/devenv/dexlogin"
)

var stack *devenv.Stack

// TestMain starts a stack without regions: its Dex is what these tests
// log in at. With -short no test runs.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{}}, &stack))
}

// relyingParty is ferry-server's side of a login, as an OIDC client library
// does it: discovery, the authorization URL, the code exchange, the ID token
// verified against Dex's keys.
type relyingParty struct {
	provider *oidc.Provider
	conf     oauth2.Config
}

func newRelyingParty(t *testing.T, ctx context.Context, redirectURI string) *relyingParty {
	t.Helper()
	provider, err := oidc.NewProvider(ctx, stack.OIDCIssuer)
	require.NoError(t, err)
	return &relyingParty{provider: provider, conf: oauth2.Config{
		ClientID:     stack.OIDCClientID,
		ClientSecret: stack.OIDCClientSecret,
		Endpoint:     provider.Endpoint(),
		RedirectURL:  redirectURI,
		Scopes:       []string{oidc.ScopeOpenID, "profile", "email", "groups"},
	}}
}

// needDex skips the test with -short, and fails it if the stack has no Dex.
func needDex(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the stack's Dex")
	}
	require.NotEmpty(t, stack.OIDCIssuer, "the stack runs Dex when the tools bin dir has it: hack/tools.sh builds it")
}

type claims struct {
	Email         string   `json:"email"`
	EmailVerified bool     `json:"email_verified"`
	Name          string   `json:"name"`
	Groups        []string `json:"groups"`
}

// login logs user in through Dex's form and returns the claims of the ID
// token the code was exchanged for.
func (rp *relyingParty) login(t *testing.T, ctx context.Context, user devenv.DexUser) claims {
	t.Helper()
	state := rand.Text()
	callback, err := dexlogin.New().Login(ctx, rp.conf.AuthCodeURL(state), rp.conf.RedirectURL, user.Email, user.Password)
	require.NoError(t, err)
	require.Equal(t, state, callback.Query().Get("state"), "the state comes back with the code")
	code := callback.Query().Get("code")
	require.NotEmpty(t, code, "callback %s", callback)

	tok, err := rp.conf.Exchange(ctx, code)
	require.NoError(t, err)
	raw, ok := tok.Extra("id_token").(string)
	require.True(t, ok, "the token response has an id_token")
	idToken, err := rp.provider.Verifier(&oidc.Config{ClientID: stack.OIDCClientID}).Verify(ctx, raw)
	require.NoError(t, err)
	require.Equal(t, stack.OIDCIssuer, idToken.Issuer)
	var c claims
	require.NoError(t, idToken.Claims(&c))
	return c
}

func user(t *testing.T, name string) devenv.DexUser {
	for _, u := range devenv.DexUsers {
		if u.Username == name {
			return u
		}
	}
	t.Fatalf("no Dex user %q in devenv.DexUsers", name)
	return devenv.DexUser{}
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestUsersLogInWithTheirGroups(t *testing.T) {
	needDex(t)
	for _, tc := range []struct {
		user, redirectURI string
		group, notGroup   string
	}{
		// ferry-server's callback, at the address the stack keeps for it.
		{user: "alice", redirectURI: "https://" + stack.ServerListen + "/auth/callback", group: "team-a", notGroup: "team-b"},
		// The CLI's callback of `ferry login --sso`.
		{user: "bob", redirectURI: devenv.CLICallbackURL, group: "team-b", notGroup: "team-a"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			ctx := timeout(t)
			rp := newRelyingParty(t, ctx, tc.redirectURI)
			u := user(t, tc.user)
			c := rp.login(t, ctx, u)
			require.Equal(t, u.Email, c.Email)
			require.True(t, c.EmailVerified)
			require.Equal(t, tc.user, c.Name)
			require.Contains(t, c.Groups, tc.group)
			require.NotContains(t, c.Groups, tc.notGroup)
		})
	}
}

func TestWrongPasswordGetsNoCode(t *testing.T) {
	needDex(t)
	ctx := timeout(t)
	rp := newRelyingParty(t, ctx, stack.OIDCRedirectURIs[0])
	alice := user(t, "alice")
	callback, err := dexlogin.New().Login(ctx, rp.conf.AuthCodeURL(rand.Text()), rp.conf.RedirectURL, alice.Email, "bob-password")
	require.ErrorIs(t, err, dexlogin.ErrRefused)
	require.ErrorContains(t, err, "Invalid Email Address and password")
	require.Nil(t, callback)
}

func TestUnregisteredRedirectURIIsRefused(t *testing.T) {
	needDex(t)
	ctx := timeout(t)
	rp := newRelyingParty(t, ctx, "https://attacker.example/auth/callback")
	alice := user(t, "alice")
	callback, err := dexlogin.New().Login(ctx, rp.conf.AuthCodeURL(rand.Text()), rp.conf.RedirectURL, alice.Email, alice.Password)
	require.Error(t, err)
	require.NotErrorIs(t, err, dexlogin.ErrRefused)
	require.ErrorContains(t, err, "Unregistered redirect_uri")
	require.Nil(t, callback)
}

func TestEnvNamesDexAndKeepsTheServerPortFree(t *testing.T) {
	needDex(t)
	env := stack.Env()
	require.Equal(t, stack.OIDCIssuer, env["FERRY_OIDC_ISSUER"])
	require.Equal(t, "ferry", env["FERRY_OIDC_CLIENT_ID"])
	require.NotEmpty(t, env["FERRY_OIDC_CLIENT_SECRET"])
	require.Equal(t, stack.OIDCClientSecret, env["FERRY_OIDC_CLIENT_SECRET"])
	require.Equal(t, stack.ServerListen, env["FERRY_SERVER_LISTEN"])
	l, err := net.Listen("tcp", stack.ServerListen)
	require.NoError(t, err, "ferry-server can listen on FERRY_SERVER_LISTEN")
	require.NoError(t, l.Close())
}
