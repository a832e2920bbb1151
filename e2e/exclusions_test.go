package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// conditionsOf are the app's conditions of one type, by message.
func conditionsOf(t *testing.T, name, typ string) []string {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	var out []string
	for _, c := range v.Status.Conditions {
		if c.Type == typ {
			out = append(out, c.Message)
		}
	}
	return out
}

// TestExcludedResourceWarning: the worker's argocd-cm excludes Secrets; an
// app whose manifests hold a Secret has Argo CD's ExcludedResourceWarning,
// worded as Argo CD words it, while the rest syncs; once the Secret is gone
// from Git, the condition goes too.
func TestExcludedResourceWarning(t *testing.T) {
	startWorker(t, "--resource-customizations", writeFile(t, argocdCMExcludeSecrets))
	const name = "excludedwarn"
	repo := newRepo(t, name)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: not-a-real-one}\n"
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/secret.yaml": secret})
	sha := repo.commitAndPush("a ConfigMap and a Secret")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "3m")))
	waitApp(t, name, sha, 2*time.Minute)
	require.Equal(t, []string{"Resource /Secret token is excluded in the settings"}, conditionsOf(t, name, "ExcludedResourceWarning"),
		"one condition for the Secret, named as Argo CD names it")

	repo.git("rm", "-q", "app/secret.yaml")
	sha = repo.commitAndPush("the Secret goes")
	mustFerry(t, "app", "refresh", name)
	waitApp(t, name, sha, 2*time.Minute)
	eventually(t, time.Minute, "the condition is cleared", func() (bool, string) {
		c := conditionsOf(t, name, "ExcludedResourceWarning")
		return len(c) == 0, "still " + strings.Join(c, "; ")
	})
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status)
	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}

// TestExcludedKindsLeftOutOfDiffAndDelete: an app's Secret and ConfigMap
// are synced by a worker without exclusions; then the workers' argocd-cm
// excludes Secrets. The live Secret drifts: ferry app diff shows it
// without the argocd-cm and leaves it out with it (--resource-customizations),
// as the workers leave it alone; a cascading ferry app delete deletes the
// ConfigMap in every region and leaves the Secret, as Argo CD ignores
// excluded kinds everywhere.
func TestExcludedKindsLeftOutOfDiffAndDelete(t *testing.T) {
	first := startWorker(t)
	const name = "excludeddel"
	repo := newRepo(t, name)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: not-a-real-one}\n"
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/secret.yaml": secret})
	sha := repo.commitAndPush("a ConfigMap and a Secret")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, false, "3m")))
	mustFerry(t, "app", "sync", name, "--wait")
	waitApp(t, name, sha, 2*time.Minute)
	ctx := context.Background()
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().Secrets(name).Get(ctx, "token", metav1.GetOptions{})
		require.NoError(t, err, "region %s: synced before Secrets were excluded", r)
	}
	t.Cleanup(func() {
		for _, r := range regions {
			_ = kubeClient(t, r).CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	first.stop()
	cm := writeFile(t, argocdCMExcludeSecrets)
	startWorker(t, "--resource-customizations", cm)
	kubectl(t, regions[0], "-n", name, "patch", "secret/token", "--type=merge", "-p", `{"stringData":{"token":"drifted"}}`)

	out, err := ferry(t, "app", "diff", name)
	require.Error(t, err, "without the argocd-cm the drifted Secret differs: %s", out)
	require.Contains(t, out, "Secret", out)
	out, err = ferry(t, "app", "diff", name, "--resource-customizations", cm)
	require.NoError(t, err, "with it, the excluded Secret is not shown: %s", out)
	require.Contains(t, out, "no differences")
	require.NotContains(t, out, "Secret")

	mustFerry(t, "app", "delete", name)
	for _, r := range regions {
		cs := kubeClient(t, r)
		_, err := cs.CoreV1().ConfigMaps(name).Get(ctx, "settings", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "region %s: the ConfigMap is deleted: %v", r, err)
		_, err = cs.CoreV1().Secrets(name).Get(ctx, "token", metav1.GetOptions{})
		require.NoError(t, err, "region %s: the excluded Secret is not deleted", r)
	}
}
