package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
