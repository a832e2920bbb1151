package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv/dexlogin"
)

// TestSSOGroupPolicy: a Dex user in group team-a, logged in through Dex's
// real OIDC flow, with argocd-rbac-cm binding the group to role:team-a,
// lists team-a's apps alone, syncs one, and is refused syncing team-b's
// and deleting its own; the audit log has the three decisions, and the
// operation records who started it.
func TestSSOGroupPolicy(t *testing.T) {
	e := newEnv(t)
	require.NotEmpty(t, stack.OIDCIssuer, "the stack runs Dex")
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, e2etest.SSOConfig(stack), "apply", "-f", "-")
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.csv: |
`+teamARole+`    g, team-a, role:team-a
`, "apply", "-f", "-")
	s := e.StartServer(t)
	// argocd-secret is the server's first start's.
	e2etest.StoreSSOSecret(t, stack)
	admin := s.Login(t, "admin", adminPassword(t))
	teamApps(t, e, s, admin, map[string]string{"team-a": "", "team-b": ""})

	token := ssoLogin(t, s, "alice@example.com", "alice-password")
	var info struct {
		LoggedIn bool
		Username string
		Groups   []string
	}
	s.MustDo(t, token, "GET", "/api/v1/session/userinfo", nil, http.StatusOK, &info)
	assert.Equal(t, "alice@example.com", info.Username)
	assert.Equal(t, []string{"team-a"}, info.Groups)

	var list struct {
		Items []struct{ Metadata struct{ Name string } }
	}
	s.MustDo(t, token, "GET", "/api/v1/applications", nil, http.StatusOK, &list)
	require.Len(t, list.Items, 1, "alice sees team-a's app alone")
	assert.Equal(t, "web-team-a", list.Items[0].Metadata.Name)

	s.MustDo(t, token, "POST", "/api/v1/applications/web-team-a/sync", map[string]any{}, http.StatusOK, nil)
	status, body := s.Do(t, token, "POST", "/api/v1/applications/web-team-b/sync", map[string]any{})
	assert.Equal(t, http.StatusForbidden, status, body)
	status, body = s.Do(t, token, "DELETE", "/api/v1/applications/web-team-a", nil)
	assert.Equal(t, http.StatusForbidden, status, body)

	var decisions []string
	for _, en := range s.AuditLog(t) {
		if en.User == "alice@example.com" && en.Resource == "applications" {
			decisions = append(decisions, fmt.Sprintf("%s %s %v", en.Action, en.Object, en.Allowed))
		}
	}
	assert.Equal(t, []string{"sync team-a/web-team-a true", "sync team-b/web-team-b false", "delete team-a/web-team-a false"}, decisions)

	var v struct {
		Status struct {
			OperationState struct {
				Operation struct {
					InitiatedBy struct{ Username string }
				}
			}
		}
	}
	s.MustDo(t, admin, "GET", "/api/v1/applications/web-team-a", nil, http.StatusOK, &v)
	assert.Equal(t, "alice@example.com", v.Status.OperationState.Operation.InitiatedBy.Username)

	_, err := browser().Login(context.Background(), s.URL+"/auth/login", "https://"+stack.ServerListen+"/auth/callback", "alice@example.com", "wrong")
	assert.ErrorIs(t, err, dexlogin.ErrRefused, "a wrong password gets no session")

	cliSSOLogin(t, e, s, "alice@example.com", "alice-password")
	out := e.MustFerry(t, "app", "list")
	assert.Contains(t, out, "web-team-a", "ferry app list through the server, as alice")
	assert.NotContains(t, out, "web-team-b")
}

// cliSSOLogin runs ferry login --sso and plays the browser it asks for:
// the server's login, Dex's form, the server's callback, and the
// redirect back to the CLI, which then keeps the session.
func cliSSOLogin(t *testing.T, e *e2etest.Env, s *e2etest.Server, email, password string) {
	t.Helper()
	e.CLIConfig = filepath.Join(t.TempDir(), "config.json")
	cmd := e.FerryCmd(t, "login", strings.TrimPrefix(s.URL, "https://"), "--sso", "--insecure")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "ferry login --sso says where to log in: %s", stderr.String())
	start, ok := strings.CutPrefix(lines.Text(), "log in in your browser: ")
	require.True(t, ok, "%s", lines.Text())

	b := browser()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	callback, err := b.Login(ctx, start, "https://"+stack.ServerListen+"/auth/callback", email, password)
	require.NoError(t, err)
	resp, err := b.Client.Get(callback.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	back := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(back, "http://127.0.0.1:"), "the server sends the browser back to the CLI: %s", back)
	resp, err = b.Client.Get(back)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	require.NoError(t, cmd.Wait(), "%s%s", rest.String(), stderr.String())
	assert.Contains(t, rest.String(), "logged in to "+s.URL+" as "+email)
}

// ssoLogin logs in at the server through Dex as a browser does: the
// server's /auth/login, Dex's form, the server's callback, whose cookie
// is the session.
func ssoLogin(t *testing.T, s *e2etest.Server, email, password string) string {
	t.Helper()
	b := browser()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	callback, err := b.Login(ctx, s.URL+"/auth/login", "https://"+stack.ServerListen+"/auth/callback", email, password)
	require.NoError(t, err)
	resp, err := b.Client.Get(callback.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode, "the callback logs in and goes to /")
	u, _ := url.Parse(s.URL)
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == "argocd.token" {
			return c.Value
		}
	}
	t.Fatalf("the callback set no argocd.token cookie")
	return ""
}

// browser is a Dex browser that takes the server's self-signed
// certificate, as one told to trust it does.
func browser() *dexlogin.Browser {
	b := dexlogin.New()
	b.Client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	return b
}
