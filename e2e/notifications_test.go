package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/notify"
)

// receiver is a loopback webhook receiver that answers 503 until told
// otherwise, and counts the notifications it accepted.
type receiver struct {
	mu        sync.Mutex
	down      bool
	refused   int               // requests answered 503
	delivered map[string]int    // accepted deliveries by X-Ferry-Notification
	bodies    map[string]string // the body of each
	auth      []string          // Authorization headers seen
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	if r.down {
		r.refused++
		http.Error(w, "receiver down", http.StatusServiceUnavailable)
		return
	}
	id := req.Header.Get(notify.NotificationHeader)
	r.delivered[id]++
	r.bodies[id] = req.Method + " " + req.URL.Path + " " + string(body)
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) state() (refused int, delivered map[string]int, bodies map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, b := map[string]int{}, map[string]string{}
	for k, v := range r.delivered {
		d[k] = v
	}
	for k, v := range r.bodies {
		b[k] = v
	}
	return r.refused, d, b
}

// gitHubAPI stands for GitHub's API: a GitHub App's installation token,
// then commit statuses.
type gitHubAPI struct {
	mu       sync.Mutex
	statuses []string // "owner/repo sha state context"
	tokens   int
}

func (g *gitHubAPI) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case req.Method == http.MethodPost && req.URL.Path == "/api/v3/app/installations/42/access_tokens" &&
		strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ey"):
		g.tokens++
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"token": "ghs_installation"}`))
	case req.Method == http.MethodPost && strings.HasPrefix(req.URL.Path, "/api/v3/repos/") &&
		req.Header.Get("Authorization") == "token ghs_installation":
		parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/api/v3/repos/"), "/")
		var st struct{ State, Context string }
		if len(parts) != 4 || parts[2] != "statuses" || json.NewDecoder(req.Body).Decode(&st) != nil {
			http.Error(w, "not a commit status", http.StatusBadRequest)
			return
		}
		g.statuses = append(g.statuses, fmt.Sprintf("%s/%s %s %s %s", parts[0], parts[1], parts[3], st.State, st.Context))
		w.WriteHeader(http.StatusCreated)
	default:
		http.Error(w, "unexpected "+req.Method+" "+req.URL.Path, http.StatusNotFound)
	}
}

func (g *gitHubAPI) seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.statuses...)
}

const notifyReceiverToken = "ferry-notify-token-4b7e1d"

func notificationsConfig(hookURL, gitHubURL string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
data:
  service.webhook.receiver: |
    url: %s
    headers:
    - name: Authorization
      value: Bearer $receiver-token
  service.github: |
    appID: 7
    installationID: 42
    privateKey: $github-privateKey
    enterpriseBaseURL: %s
  template.app-sync-failed: |
    message: The sync of {{.app.metadata.name}} failed.
    webhook:
      receiver:
        method: POST
        path: /hooks/{{.app.metadata.name}}
        body: '{"app": "{{.app.metadata.name}}", "revision": "{{.app.status.operationState.syncResult.revision}}", "phase": "{{.app.status.operationState.phase}}"}'
    github:
      repoURLPath: https://github.example/ferry-e2e/{{.app.metadata.name}}
      status:
        state: failure
        label: continuous-delivery/{{.app.metadata.name}}
`, hookURL, gitHubURL)
}

// TestNotificationOfAFailedSyncIsSentOnce: a failed sync notifies a
// webhook receiver that answers 503; the worker sending it is killed with
// kill -9 while it does; a new worker goes on retrying, and once the
// receiver answers there is exactly one delivery of the event. The same
// trigger sets a GitHub commit status, through a GitHub App's token, on
// the commit's SHA at a server standing for GitHub's API. No secret of the
// services is in any history.
func TestNotificationOfAFailedSyncIsSentOnce(t *testing.T) {
	hook := &receiver{down: true, delivered: map[string]int{}, bodies: map[string]string{}}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()
	gh := &gitHubAPI{}
	ghSrv := httptest.NewServer(gh)
	defer ghSrv.Close()

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	dir := t.TempDir()
	cfgFile, secretFile := filepath.Join(dir, "argocd-notifications-cm.yaml"), filepath.Join(dir, "secret.yaml")
	require.NoError(t, os.WriteFile(cfgFile, []byte(notificationsConfig(hookSrv.URL, ghSrv.URL)), 0o600))
	secret, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]string{"name": "argocd-notifications-secret"}, "stringData": map[string]string{"github-privateKey": keyPEM}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(secretFile, secret, 0o600))
	env := []string{notify.EnvName("receiver-token") + "=" + notifyReceiverToken}
	flags := []string{"--notifications-config", cfgFile, "--notifications-secret", secretFile}
	first := startWorkerEnv(t, env, flags...)

	const name = "notifyfail"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/pod.yaml": failingPod("fails", "0"),
		"app/cm.yaml":  inWave(configMap("later", "v1"), "1"),
	})
	sha := repo.commitAndPush("a pod that fails")
	manifest := strings.Replace(appYAML(name, repo.URL, "app", name, false, "3m"), "metadata:\n", "metadata:\n  annotations:\n"+
		"    notifications.argoproj.io/subscribe.on-sync-failed.receiver: \"\"\n"+
		"    notifications.argoproj.io/subscribe.on-sync-failed.github: \"\"\n", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, manifest))
	op := syncFails(t, name)
	require.Equal(t, sha, op.Revision)

	eventually(t, 2*time.Minute, "the receiver refused the notification twice", func() (bool, string) {
		refused, _, _ := hook.state()
		return refused >= 2, fmt.Sprintf("%d refused", refused)
	})
	first.kill9()
	refusedAtKill, _, _ := hook.state()
	startWorkerEnv(t, env, flags...)
	eventually(t, 3*time.Minute, "the new worker retries the notification", func() (bool, string) {
		refused, _, _ := hook.state()
		return refused > refusedAtKill, fmt.Sprintf("%d refused, %d at the kill", refused, refusedAtKill)
	})
	hook.mu.Lock()
	hook.down = false
	hook.mu.Unlock()

	var id string
	eventually(t, 3*time.Minute, "the notification is delivered", func() (bool, string) {
		_, delivered, _ := hook.state()
		for k := range delivered {
			id = k
		}
		return len(delivered) > 0, "none yet"
	})
	c := temporalClient(t)
	notifiedThenReconciled(t, c, id, name)
	_, delivered, bodies := hook.state()
	require.Equal(t, map[string]int{id: 1}, delivered, "exactly one delivery of the failed sync")
	require.Equal(t, fmt.Sprintf(`POST /hooks/%s {"app": "%s", "revision": "%s", "phase": "Failed"}`, name, name, sha), bodies[id])
	require.True(t, strings.HasPrefix(id, contract.WorkflowID(name)+"/notify/"), id)
	for _, a := range hook.auth {
		require.Equal(t, "Bearer "+notifyReceiverToken, a, "the header's $secret is resolved from the environment")
	}

	eventually(t, time.Minute, "the commit status reaches the GitHub API", func() (bool, string) {
		return len(gh.seen()) > 0, "none yet"
	})
	require.Equal(t, []string{fmt.Sprintf("ferry-e2e/%s %s failure continuous-delivery/%s", name, sha, name)}, gh.seen())

	histories := e2etest.WorkflowHistories(t, c, contract.WorkflowID(name))
	for run, data := range e2etest.WorkflowHistories(t, c, id) {
		histories["notification "+run] = data
	}
	for run, data := range histories {
		for _, s := range []string{notifyReceiverToken, "PRIVATE KEY", "ghs_installation"} {
			require.NotContains(t, string(data), s, "history %s", run)
		}
	}
	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
	recordWorkflowHistories(t, id, name+"-notification")
}

// notifiedThenReconciled waits for notification id's workflow to complete,
// then for app name to reconcile again, the condition that fired still
// holding: after it, a second notification would have been sent.
func notifiedThenReconciled(t *testing.T, c client.Client, id, name string) {
	t.Helper()
	eventually(t, time.Minute, "the notification's workflow completes", func() (bool, string) {
		d, err := c.DescribeWorkflowExecution(t.Context(), id, "")
		if err != nil {
			return false, err.Error()
		}
		return d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.WorkflowExecutionInfo.Status.String()
	})
	refreshed(t, name)
}
