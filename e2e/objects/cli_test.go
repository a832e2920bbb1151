package objects

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestFerryCLIWritesTheObject: with a control cluster the object is the
// app, so ferry app apply writes it (field manager ferry) and returns once
// the app runs its spec, ferry app sync says it syncs through Temporal,
// ferry app set and patch write the object, and ferry app delete deletes
// it, cascading as argocd app delete does.
func TestFerryCLIWritesTheObject(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "guestbook-cli")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	sha := repo.CommitAndPush("guestbook")
	manifest := strings.NewReplacer("name: guestbook\n", "name: cli\n", "namespace: default\n", "namespace: cli\n").
		Replace(fmt.Sprintf(guestbook, repo.URL)) + "  syncPolicy:\n    automated: {}\n    syncOptions: [CreateNamespace=true]\n"
	file := t.TempDir() + "/cli.yaml"
	require.NoError(t, os.WriteFile(file, []byte(manifest), 0o644))

	e.MustFerry(t, "app", "apply", "-f", file)
	_, ok, state := getObject(t, "cli")
	require.True(t, ok, "ferry app apply wrote the object: %s", state)
	require.Contains(t, mustKubectl(t, "", "get", "application", "cli", "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields[*].manager}"), "ferry")
	v, err := e2etest.Query(e.TemporalClient(t), "cli")
	require.NoError(t, err, "the app runs once apply returns")
	require.Equal(t, "argocd/cli", v.Owner.Object)
	waitObject(t, "cli", 3*time.Minute, "Synced and Healthy at "+e2etest.Short(sha), func(o object) bool {
		return o.Status.Sync.Status == "Synced" && o.Status.Health.Status == "Healthy" && o.Status.Sync.Revision == sha
	})

	out := e.MustFerry(t, "app", "sync", "cli", "--wait")
	require.Contains(t, out, `app "cli" is Application object argocd/cli's: the sync was sent to its workflow as an update`, "sync says how it went")
	require.Contains(t, out, "Succeeded")

	// set and patch write the object, and the app runs what it says.
	out = e.MustFerry(t, "app", "set", "cli", "--sync-option", "ServerSideApply=true")
	require.Contains(t, out, `application "cli" updated`)
	require.Equal(t, "CreateNamespace=true ServerSideApply=true",
		mustKubectl(t, "", "get", "application", "cli", "-o", "jsonpath={.spec.syncPolicy.syncOptions[*]}"), "the object's spec")
	e.MustFerry(t, "app", "patch", "cli", "--type", "merge", "--patch", `{"metadata": {"labels": {"team": "web"}}}`)
	require.Equal(t, "web", mustKubectl(t, "", "get", "application", "cli", "-o", "jsonpath={.metadata.labels.team}"), "the object's label")
	e2etest.Eventually(t, time.Minute, "the app runs the object's new spec and labels", func() (bool, string) {
		v, err := e2etest.Query(e.TemporalClient(t), "cli")
		if err != nil {
			return false, err.Error()
		}
		opts := v.Spec.SyncPolicy.SyncOptions
		return v.Metadata.Labels["team"] == "web" && len(opts) == 2 && opts[1] == "ServerSideApply=true", fmt.Sprint(v.Metadata.Labels, opts)
	})

	out = e.MustFerry(t, "app", "delete", "cli")
	require.Contains(t, out, `application "cli" deleted`)
	_, ok, _ = getObject(t, "cli")
	require.False(t, ok, "the object is gone once delete returns")
	_, err = e.KubeClient(t, "us-east-1").AppsV1().Deployments("cli").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the delete cascaded: %v", err)
}
