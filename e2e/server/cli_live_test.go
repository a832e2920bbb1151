package server

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// TestCLILiveCommandsThroughTheServer: logged in as a user who may read
// the app and its logs but run no action, ferry app logs, manifests, diff,
// resources and actions go through ferry-server and print what their
// direct paths print; the restart is refused naming the permission it
// needs, and runs once the admin is logged in.
func TestCLILiveCommandsThroughTheServer(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {accounts.reader: login}\n", "apply", "-f", "-")
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.csv: |
    p, reader, applications, get, clive/*, allow
    p, reader, logs, get, clive/*, allow
`, "apply", "-f", "-")
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	s.MustDo(t, admin, "PUT", "/api/v1/account/password",
		map[string]string{"name": "reader", "currentPassword": adminPassword(t), "newPassword": "reader-password"}, http.StatusOK, nil)

	files := maps.Clone(liveApp)
	// A Pod of its own: one container, whose lines come bare.
	files["app/solo.yaml"] = "apiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec:\n  containers:\n  - {name: main, image: nginx:1.27}\n"
	_, sha := s.DeployTeamApp(t, e, admin, "clive", files)
	region := regions[0]

	e.CLIConfig = filepath.Join(t.TempDir(), "config.json")
	cliLogin(t, e, s, "reader", "reader-password")

	t.Run("logs", func(t *testing.T) {
		var out string
		e2etest.Eventually(t, time.Minute, "a line of each container of both pods", func() (bool, string) {
			out = e.MustFerry(t, "app", "logs", "clive", "--kind", "Deployment")
			return len(strings.Split(strings.TrimSpace(out), "\n")) == 4, out
		})
		line := regexp.MustCompile(`^\[` + region + ` clive/(web-\S+) (nginx|sidecar)\] (.*)$`)
		pods := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			m := line.FindStringSubmatch(l)
			require.NotNil(t, m, "a line with its [region namespace/pod container] prefix: %q", l)
			assert.Equal(t, devenv.FakeLogLine, m[3])
			pods[m[1]] = true
		}
		require.Len(t, pods, 2, out)
		one := e.MustFerry(t, "app", "logs", "clive", "--kind", "Pod", "--name", "solo")
		assert.Equal(t, devenv.FakeLogLine+"\n", one, "one container's lines come bare")
	})

	t.Run("manifests", func(t *testing.T) {
		git := e.MustFerry(t, "app", "manifests", "clive")
		assert.Contains(t, git, "color: blue")
		assert.Contains(t, git, "password: ++++++++")
		assert.NotContains(t, git, "hunter2")
		live := e.MustFerry(t, "app", "manifests", "clive", "--source", "live")
		assert.Contains(t, live, "# region: "+region)
		assert.Contains(t, live, "readyReplicas: 2")
		assert.Contains(t, live, "password: ++++++++")
		for _, secret := range []string{"hunter2", "aHVudGVyMg"} {
			assert.NotContains(t, live, secret)
		}
	})

	t.Run("resources", func(t *testing.T) {
		out := e.MustFerry(t, "app", "resources", "clive")
		for _, row := range []string{`apps\s+Deployment\s+clive\s+web\s+No`, `ConfigMap\s+clive\s+settings\s+No`, `Secret\s+clive\s+creds\s+No`, `Pod\s+clive\s+solo\s+No`} {
			assert.Regexp(t, region+`\s+`+row, out)
		}
		out, err := e.Ferry(t, "app", "resources", "clive", "--orphaned")
		require.Error(t, err)
		assert.Contains(t, out, "orphaned resources are not offered through ferry-server yet")
	})

	t.Run("diff", func(t *testing.T) {
		out, err := e.Ferry(t, "app", "diff", "clive")
		require.NoError(t, err, "nothing differs yet: %s", out)
		assert.Contains(t, out, "app clive at "+sha[:7])
		assert.Contains(t, out, "no differences")

		settings := regionObject(t, region, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "clive", "settings")
		require.NoError(t, unstructured.SetNestedField(settings.obj.Object, "red", "data", "color"))
		_, err = settings.client.Update(context.Background(), settings.obj, metav1.UpdateOptions{})
		require.NoError(t, err)
		out, err = e.Ferry(t, "app", "diff", "clive")
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v: %s", err, out)
		assert.Equal(t, 1, exit.ExitCode(), "1: something differs: %s", out)
		assert.Contains(t, out, "===== "+region+": ConfigMap clive/settings: differs at data.color")
		assert.Contains(t, out, "--- live/ConfigMap/clive/settings\n+++ desired/ConfigMap/clive/settings\n")
		assert.Contains(t, out, "\n-  color: red\n+  color: blue\n")
		assert.NotContains(t, out, "Deployment", "only what differs")

		out, err = e.Ferry(t, "app", "diff", "clive", "--resource-customizations", "argocd-cm.yaml")
		require.Error(t, err)
		assert.Contains(t, out, "--resource-customizations is read by ferry-server from argocd-cm when you are logged in: drop it")
	})

	t.Run("actions", func(t *testing.T) {
		list := e.MustFerry(t, "app", "actions", "list", "clive", "--kind", "Deployment", "--resource-name", "web")
		assert.Regexp(t, region+`\s+apps\s+Deployment\s+clive\s+web\s+restart\s+false`, list)
		out, err := e.Ferry(t, "app", "actions", "run", "clive", "restart", "--kind", "Deployment", "--resource-name", "web")
		require.Error(t, err, "the reader may not run actions: %s", out)
		assert.Contains(t, out, "action/apps/Deployment/restart")

		cliLogin(t, e, s, "admin", adminPassword(t))
		out = e.MustFerry(t, "app", "actions", "run", "clive", "restart", "--kind", "Deployment", "--resource-name", "web")
		assert.Contains(t, out, region+`: action "restart" on apps/Deployment clive/web: `)
		assert.Contains(t, out, "restarted")
		web := regionObject(t, region, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "clive", "web")
		at, _, _ := unstructured.NestedString(web.obj.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
		assert.NotEmpty(t, at, "the restart set the pod template's restartedAt")
	})
}

// cliLogin logs the test's CLI in to s as username.
func cliLogin(t *testing.T, e *e2etest.Env, s *e2etest.Server, username, password string) {
	t.Helper()
	login := e.FerryCmd(t, "login", strings.TrimPrefix(s.URL, "https://"), "--username", username, "--password-stdin", "--insecure")
	login.Stdin = strings.NewReader(password + "\n")
	out, err := login.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "logged in to "+s.URL+" as "+username)
}
