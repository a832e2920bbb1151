package server

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestCLIThroughTheServer: the admin logs in with the password of
// argocd-initial-admin-secret; ferry app sync then goes through the
// server, and the operation says admin started it. A project role token
// made with ferry project role create-token syncs the project's apps with
// plain HTTPS calls until its id is removed from the AppProject.
func TestCLIThroughTheServer(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm, namespace: argocd}\ndata: {}\n", "apply", "-f", "-")
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	teamApps(t, e, s, admin, map[string]string{"team-c": `  roles:
  - name: ci
    description: the CI of team-c
    policies:
    - p, proj:team-c:ci, applications, get, team-c/*, allow
    - p, proj:team-c:ci, applications, sync, team-c/*, allow
`})

	e.CLIConfig = filepath.Join(t.TempDir(), "config.json")
	login := e.FerryCmd(t, "login", strings.TrimPrefix(s.URL, "https://"), "--username", "admin", "--password-stdin", "--insecure")
	login.Stdin = strings.NewReader(adminPassword(t) + "\n")
	out, err := login.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "logged in to "+s.URL+" as admin")

	out2 := e.MustFerry(t, "app", "sync", "web-team-c", "--wait")
	assert.Contains(t, out2, "Succeeded")
	var v struct {
		Status struct {
			OperationState struct {
				Operation struct{ InitiatedBy struct{ Username string } }
			}
		}
	}
	s.MustDo(t, admin, "GET", "/api/v1/applications/web-team-c", nil, http.StatusOK, &v)
	assert.Equal(t, "admin", v.Status.OperationState.Operation.InitiatedBy.Username, "the operation was started through the server, by admin")
	assert.Contains(t, e.MustFerry(t, "app", "get", "web-team-c"), "Initiated By:  admin")
	assert.Contains(t, e.MustFerry(t, "app", "list"), "web-team-c")
	assert.Contains(t, e.MustFerry(t, "app", "history", "web-team-c"), "ID", "the history is the app's, through the server")
	out3, err := e.Ferry(t, "app", "wait", "web-team-c")
	require.Error(t, err, "a command that needs Temporal says so while logged in")
	assert.Contains(t, out3, "run ferry logout first")

	token := strings.TrimSpace(e.MustFerry(t, "project", "role", "create-token", "team-c", "ci"))
	require.Equal(t, 3, len(strings.Split(token, ".")), "a JWT alone: %s", token)
	s.MustDo(t, token, "POST", "/api/v1/applications/web-team-c/sync", map[string]any{}, http.StatusOK, nil)
	status, body := s.Do(t, token, "DELETE", "/api/v1/applications/web-team-c", nil)
	assert.Equal(t, http.StatusForbidden, status, "the role may not delete: %s", body)
	jwtTokens := kubectl(t, "", "get", "appproject", "team-c", "-o", "jsonpath={.spec.roles[0].jwtTokens[*].id}")
	require.NotEmpty(t, jwtTokens, "the token's id is in the AppProject object")

	kubectl(t, "", "patch", "appproject", "team-c", "--type", "json", "-p", `[{"op":"remove","path":"/spec/roles/0/jwtTokens"}]`)
	e2etest.Eventually(t, time.Minute, "the token is refused once its id is removed", func() (bool, string) {
		status, body := s.Do(t, token, "GET", "/api/v1/applications/web-team-c", nil)
		return status == http.StatusUnauthorized, fmt.Sprintf("%d %s", status, body)
	})
	e.MustFerry(t, "logout")
	_, err = e.Ferry(t, "project", "role", "create-token", "team-c", "ci")
	require.Error(t, err, "tokens need the server")
}
