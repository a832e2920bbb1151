package objects

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestControlWorkerKilledWhileObjectsAreApplied: the worker is killed with
// SIGKILL right after 20 objects are applied; once another has taken over
// (the Lease of the dead one runs out), every app runs, exactly once, and
// every object shows its app's current status.
func TestControlWorkerKilledWhileObjectsAreApplied(t *testing.T) {
	e := newEnv(t)
	first := e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "settings")
	repo.Write(map[string]string{"cm/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n"})
	sha := repo.CommitAndPush("settings")
	var docs []string
	names := make([]string, 20)
	for i := range names {
		names[i] = fmt.Sprintf("fleet-%02d", i)
		docs = append(docs, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
spec:
  project: default
  source: {repoURL: %q, targetRevision: HEAD, path: cm}
  destination: {server: "https://kubernetes.default.svc", namespace: %s}
  syncPolicy:
    automated: {}
    syncOptions: [CreateNamespace=true]
`, names[i], repo.URL, names[i]))
	}
	// The first worker must be leading, so that it is killed mid-work.
	waitLeader(t)
	mustKubectl(t, strings.Join(docs, "---\n"), "apply", "-f", "-")
	first.Kill9()
	e.StartWorker(t, e.AllRoles()...)

	c := e.TemporalClient(t)
	for _, name := range names {
		o := waitObject(t, name, 4*time.Minute, "Synced and Healthy at "+e2etest.Short(sha), func(o object) bool {
			return o.Status.Sync.Status == "Synced" && o.Status.Health.Status == "Healthy" && o.Status.Sync.Revision == sha
		})
		v, err := e2etest.Query(c, name)
		require.NoError(t, err)
		require.Equal(t, string(v.Status.Sync.Status), o.Status.Sync.Status, "%s: the object's status is the app's", name)
		require.Equal(t, string(v.Status.Health.Status), o.Status.Health.Status, "%s: the object's status is the app's", name)
		require.Equal(t, 1, e2etest.Starts(t, c, "app/"+name), "%s was started exactly once", name)
	}
}

// waitLeader waits until a controller holds the Lease of the control
// namespace.
func waitLeader(t *testing.T) {
	t.Helper()
	e2etest.Eventually(t, time.Minute, "a controller leads", func() (bool, string) {
		out, err := kubectl(t, "", "get", "lease", "ferry-applications", "-o", "jsonpath={.spec.holderIdentity}")
		return err == nil && out != "", out
	})
}
