package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// notifyClusterConfig is argocd-notifications-cm's data: a webhook whose
// Authorization header is a $secret, and a template whose body says which
// edit of the ConfigMap rendered it.
func notifyClusterConfig(hookURL, edit string) map[string]string {
	return map[string]string{
		"service.webhook.receiver": "url: " + hookURL + "\nheaders:\n- name: Authorization\n  value: Bearer $receiver-token\n",
		"template.app-sync-failed": "message: failed\nwebhook:\n  receiver:\n    method: POST\n    body: '" + edit + " {{.app.metadata.name}} {{.app.status.operationState.phase}}'\n",
	}
}

// TestNotificationsConfigFromTheControlCluster: argocd-notifications-cm and
// argocd-notifications-secret live in a namespace of the control cluster,
// which the worker watches with --notifications-namespace. A failed sync is
// delivered to a loopback receiver with the Secret's token in its
// Authorization header; the ConfigMap's template is then edited, and the
// next failed sync (of a new commit: the trigger is once per revision) is
// delivered as the edited template says, with no
// restart. The token is in no history and not in the worker's log.
func TestNotificationsConfigFromTheControlCluster(t *testing.T) {
	hook := &receiver{delivered: map[string]int{}, bodies: map[string]string{}}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()

	const ns, token = "ferry-notify", "cluster-token-7c2f90"
	control := kubeClient(t, regions[0])
	ctx := context.Background()
	_, err := control.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = control.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	_, err = control.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-notifications-secret"},
		StringData: map[string]string{"receiver-token": token},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = control.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-notifications-cm"},
		Data:       notifyClusterConfig(hookSrv.URL, "first"),
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	w := startWorker(t, "--notifications-namespace", ns, "--notifications-context", regions[0])

	const name = "notifycluster"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/pod.yaml": failingPod("fails", "0"),
		"app/cm.yaml":  inWave(configMap("later", "v1"), "1"),
	})
	repo.commitAndPush("a pod that fails")
	manifest := strings.Replace(appYAML(name, repo.URL, "app", name, false, "3m"), "metadata:\n",
		"metadata:\n  annotations:\n    notifications.argoproj.io/subscribe.on-sync-failed.receiver: \"\"\n", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, manifest))
	syncFails(t, name)

	delivered := func(n int) map[string]string {
		eventually(t, 3*time.Minute, fmt.Sprintf("delivery %d", n), func() (bool, string) {
			_, d, _ := hook.state()
			return len(d) >= n, fmt.Sprintf("%d delivered", len(d))
		})
		_, d, bodies := hook.state()
		for id, count := range d {
			require.Equal(t, 1, count, "delivery %s", id)
			require.True(t, strings.HasPrefix(id, contract.WorkflowID(name)+"/notify/"), id)
		}
		return bodies
	}
	bodies := delivered(1)
	require.Len(t, bodies, 1)
	for _, b := range bodies {
		require.Equal(t, "POST / first "+name+" Failed", b)
	}

	// The edit is seen by the worker's watch (its log names the
	// ConfigMap's new resourceVersion) before the next sync fails.
	cm, err := control.CoreV1().ConfigMaps(ns).Get(ctx, "argocd-notifications-cm", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data = notifyClusterConfig(hookSrv.URL, "second")
	cm, err = control.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, time.Minute, "the worker reads the edited ConfigMap", func() (bool, string) {
		log, err := os.ReadFile(w.Log)
		require.NoError(t, err)
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "notifications: config read") && strings.Contains(line, "resourceVersion="+cm.ResourceVersion) {
				return true, ""
			}
		}
		return false, "not in its log yet"
	})
	// on-sync-failed is sent once per revision: a new commit fails too.
	repo.write(map[string]string{
		"app/cm.yaml": inWave(configMap("later", "v2"), "1"),
	})
	second := repo.commitAndPush("the later wave changes")
	op := syncFails(t, name)
	require.Equal(t, second, op.Revision)
	bodies = delivered(2)
	require.Len(t, bodies, 2, "one delivery per failed sync")
	var got []string
	for _, b := range bodies {
		got = append(got, b)
	}
	require.ElementsMatch(t, []string{"POST / first " + name + " Failed", "POST / second " + name + " Failed"}, got)
	for _, a := range hook.auth {
		require.Equal(t, "Bearer "+token, a, "the header's $secret is the Secret's value")
	}

	c := temporalClient(t)
	for run, data := range e2etest.WorkflowHistories(t, c, contract.WorkflowID(name)) {
		require.NotContains(t, string(data), token, "history %s", run)
	}
	log, err := os.ReadFile(w.Log)
	require.NoError(t, err)
	require.NotContains(t, string(log), token, "the worker's log")
	mustFerry(t, "app", "delete", name, "--cascade")
}
