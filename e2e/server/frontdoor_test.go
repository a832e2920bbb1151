package server

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// teamARole is role:team-a of argocd-rbac-cm's policy.csv: get and sync
// on team-a's apps.
const teamARole = `    p, role:team-a, applications, get, team-a/*, allow
    p, role:team-a, applications, sync, team-a/*, allow
`

// teamApps makes the projects and one app each, from one repo, and waits
// until the server shows them to the admin.
func teamApps(t *testing.T, e *e2etest.Env, s *e2etest.Server, admin string, teams map[string]string) {
	t.Helper()
	repo := e.NewRepo(t, "teams-"+strings.ToLower(t.Name()))
	repo.Write(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n"})
	repo.CommitAndPush("settings")
	for team, roles := range teams {
		kubectl(t, e2etest.Project(team, roles), "apply", "-f", "-")
	}
	for team := range teams {
		kubectl(t, e2etest.TeamApp("web-"+team, team, repo.URL), "apply", "-f", "-")
	}
	for team := range teams {
		e2etest.Eventually(t, 2*time.Minute, "the server shows web-"+team, func() (bool, string) {
			status, body := s.Do(t, admin, "GET", "/api/v1/applications/web-"+team, nil)
			return status == http.StatusOK, body
		})
	}
}

// TestAccountsPolicyAndAudit: the admin logs in with the password Argo CD
// users read from argocd-initial-admin-secret and sets a local account's
// password; that account, bound to role:team-a by argocd-rbac-cm, sees and
// syncs team-a's app only, and the audit log and the app's Events say so.
func TestAccountsPolicyAndAudit(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  accounts.alice: login
  accounts.ci: apiKey
  accounts.dana: login
`, "apply", "-f", "-")
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.csv: |
`+teamARole+`    g, alice, role:team-a
    p, dana, applications, get, default/*, allow
`, "apply", "-f", "-")
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	teamApps(t, e, s, admin, map[string]string{"team-a": "", "team-b": ""})
	// An app that names no project is the default project's, as in Argo CD.
	kubectl(t, strings.Replace(e2etest.TeamApp("no-project", "default", "https://git.example.com/none.git"), "  project: default\n", "", 1), "apply", "-f", "-")
	s.MustDo(t, admin, "PUT", "/api/v1/account/password",
		map[string]string{"name": "alice", "currentPassword": adminPassword(t), "newPassword": "alice-password"}, http.StatusOK, nil)

	s.MustDo(t, admin, "PUT", "/api/v1/account/password",
		map[string]string{"name": "dana", "currentPassword": adminPassword(t), "newPassword": "dana-password"}, http.StatusOK, nil)
	dana := s.Login(t, "dana", "dana-password")
	e2etest.Eventually(t, 2*time.Minute, "dana gets the default project's app", func() (bool, string) {
		status, body := s.Do(t, dana, "GET", "/api/v1/applications/no-project", nil)
		return status == http.StatusOK, body
	})
	status, body := s.Do(t, dana, "GET", "/api/v1/applications/web-team-a", nil)
	assert.Equal(t, http.StatusForbidden, status, body)

	alice := s.Login(t, "alice", "alice-password")
	var info struct {
		LoggedIn bool
		Username string
	}
	s.MustDo(t, alice, "GET", "/api/v1/session/userinfo", nil, http.StatusOK, &info)
	assert.True(t, info.LoggedIn)
	assert.Equal(t, "alice", info.Username)

	var list struct {
		Items []struct {
			Metadata struct{ Name, Namespace string }
			Spec     struct{ Project string }
		}
	}
	s.MustDo(t, alice, "GET", "/api/v1/applications", nil, http.StatusOK, &list)
	require.Len(t, list.Items, 1, "alice sees team-a's app alone")
	assert.Equal(t, "web-team-a", list.Items[0].Metadata.Name)
	assert.Equal(t, "argocd", list.Items[0].Metadata.Namespace)
	s.MustDo(t, admin, "GET", "/api/v1/applications?projects=team-b", nil, http.StatusOK, &list)
	require.Len(t, list.Items, 1, "the admin filters by project")
	assert.Equal(t, "team-b", list.Items[0].Spec.Project)

	var synced struct {
		Status struct {
			OperationState struct{ Phase string }
		}
	}
	s.MustDo(t, alice, "POST", "/api/v1/applications/web-team-a/sync", map[string]any{"prune": false}, http.StatusOK, &synced)
	assert.NotEmpty(t, synced.Status.OperationState.Phase, "the answer is the app with its operation")
	status, body = s.Do(t, alice, "POST", "/api/v1/applications/web-team-b/sync", map[string]any{})
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.Contains(t, body, "permission denied: sync applications team-b/web-team-b")
	status, body = s.Do(t, alice, "DELETE", "/api/v1/applications/web-team-a", nil)
	assert.Equal(t, http.StatusForbidden, status, body)

	var aliceEntries []e2etest.AuditEntry
	for _, en := range s.AuditLog(t) {
		if en.User == "alice" && en.Resource == "applications" {
			aliceEntries = append(aliceEntries, en)
		}
	}
	require.Len(t, aliceEntries, 3, "the sync allowed and the two denials: %+v", aliceEntries)
	assert.Equal(t, []bool{true, false, false}, []bool{aliceEntries[0].Allowed, aliceEntries[1].Allowed, aliceEntries[2].Allowed})
	assert.Equal(t, []string{"sync team-a/web-team-a", "sync team-b/web-team-b", "delete team-a/web-team-a"},
		[]string{aliceEntries[0].Action + " " + aliceEntries[0].Object, aliceEntries[1].Action + " " + aliceEntries[1].Object, aliceEntries[2].Action + " " + aliceEntries[2].Object})
	e2etest.Eventually(t, 30*time.Second, "an Event on the Application says alice synced it", func() (bool, string) {
		out := kubectl(t, "", "get", "events", "--field-selector", "involvedObject.name=web-team-a", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(out, "alice initiated sync"), out
	})
}

// TestRefusals: wrong passwords, forged and expired tokens, unknown paths
// and a broken policy get Argo CD's answers, and say nothing secret.
func TestRefusals(t *testing.T) {
	e := newEnv(t)
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {accounts.ci: apiKey}\n", "apply", "-f", "-")
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm, namespace: argocd}\ndata: {policy.default: 'role:readonly'}\n", "apply", "-f", "-")
	s := e.StartServer(t, "--login-max-failures", "3")
	admin := s.Login(t, "admin", adminPassword(t))

	status, body := s.Do(t, "", "POST", "/api/v1/session", map[string]string{"username": "admin", "password": "wrong"})
	assert.Equal(t, http.StatusUnauthorized, status)
	status, nobody := s.Do(t, "", "POST", "/api/v1/session", map[string]string{"username": "nobody", "password": "wrong"})
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, body, nobody, "a wrong name is answered as a wrong password")
	s.Do(t, "", "POST", "/api/v1/session", map[string]string{"username": "admin", "password": "wrong"})
	s.Do(t, "", "POST", "/api/v1/session", map[string]string{"username": "admin", "password": "wrong"})
	status, body = s.Do(t, "", "POST", "/api/v1/session", map[string]string{"username": "admin", "password": adminPassword(t)})
	assert.Equal(t, http.StatusTooManyRequests, status, "after 3 failures even the right password waits: %s", body)

	parts := strings.Split(admin, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	forged := map[string]string{
		"alg none":        base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".",
		"payload changed": parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"admin"`, `"alice"`, 1))) + "." + parts[2],
	}
	var key struct{ Token string }
	s.MustDo(t, admin, "POST", "/api/v1/account/ci/token", map[string]any{"expiresIn": 3}, http.StatusOK, &key)
	s.MustDo(t, key.Token, "GET", "/api/v1/applications", nil, http.StatusOK, nil)
	time.Sleep(4 * time.Second) // its 3 s from the second it was issued in are over
	forged["expired"] = key.Token
	for name, tok := range forged {
		status, body := s.Do(t, tok, "GET", "/api/v1/applications", nil)
		assert.Equal(t, http.StatusUnauthorized, status, "%s: %s", name, body)
		assert.NotContains(t, body, tok, name)
	}

	status, body = s.Do(t, admin, "GET", "/api/v1/clusters", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, "GET /api/v1/clusters is not an API of ferry-server")

	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm, namespace: argocd}\ndata: {policy.default: 'role:readonly', policy.csv: 'p, role:x, applications, get'}\n", "apply", "-f", "-")
	e2etest.Eventually(t, 30*time.Second, "/api/version says the policy was refused", func() (bool, string) {
		_, body := s.Do(t, "", "GET", "/api/version", nil)
		return strings.Contains(body, "the last good policy is in force: argocd-rbac-cm: policy.csv line 1: a p line has 5 fields"), body
	})
	s.MustDo(t, admin, "POST", "/api/v1/account/ci/token", map[string]any{}, http.StatusOK, &key)
	s.MustDo(t, key.Token, "GET", "/api/v1/projects", nil, http.StatusOK, nil) // policy.default role:readonly stays
}
