package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// childApp is a child Application of the parent, kept in the parent's path:
// automated, with Argo CD's resources finalizer (cascading delete).
func childApp(name, repoURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  namespace: argocd\n", name)
	b.WriteString("  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: default\n")
	fmt.Fprintf(&b, "  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n  destinations:\n", repoURL, name)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, name)
	}
	b.WriteString("  syncPolicy:\n    automated: {prune: true}\n    syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

// TestAppOfApps: the Applications a parent renders run as apps; a new one
// from a push is synced, one removed from Git is deleted with its resources;
// the parent's health reflects its children.
func TestAppOfApps(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "platform")
	repo.write(map[string]string{
		"apps/child-a.yaml": childApp("child-a", repo.URL),
		"child-a/cm.yaml":   configMap("a", "v1"),
	})
	sha1 := repo.commitAndPush("child-a")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("platform", repo.URL, "apps", "platform", true, "3m")))
	waitApp(t, "child-a", sha1, 2*time.Minute)
	st := waitApp(t, "platform", sha1, time.Minute)
	require.True(t, hasChildRow(st, "child-a"), "the child is a resource of the parent: %+v", st.Resources)

	// A new child from a push: one refresh of the parent.
	repo.write(map[string]string{
		"apps/child-b.yaml": childApp("child-b", repo.URL),
		"child-b/cm.yaml":   configMap("b", "v1"),
	})
	sha2 := repo.commitAndPush("child-b")
	mustFerry(t, "app", "refresh", "platform")
	waitApp(t, "child-b", sha2, time.Minute)
	waitApp(t, "platform", sha2, time.Minute)

	// child-b gone from Git: pruned, cascading to its ConfigMap.
	repo.git("rm", "-q", "apps/child-b.yaml")
	sha3 := repo.commitAndPush("drop child-b")
	mustFerry(t, "app", "refresh", "platform")
	st = waitApp(t, "platform", sha3, time.Minute)
	require.False(t, hasChildRow(st, "child-b"))
	c := temporalClient(t)
	eventually(t, time.Minute, "child-b deleted", func() (bool, string) {
		d, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID("child-b"), "")
		if err != nil {
			return false, err.Error()
		}
		s := d.WorkflowExecutionInfo.GetStatus()
		return s == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, s.String()
	})
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("child-b").Get(context.Background(), "b", metav1.GetOptions{})
		require.Error(t, err, "child-b's ConfigMap deleted in %s", r)
		_, err = kubeClient(t, r).CoreV1().ConfigMaps("child-a").Get(context.Background(), "a", metav1.GetOptions{})
		require.NoError(t, err, "child-a untouched in %s", r)
	}
	recordHistories(t, "platform")
	mustFerry(t, "app", "delete", "platform", "--cascade=false")
	mustFerry(t, "app", "delete", "child-a", "--cascade")
}

func hasChildRow(st *app.Status, name string) bool {
	for _, r := range st.Resources {
		if r.Kind == app.Kind && r.Name == name {
			return r.Status == app.SyncStatusSynced
		}
	}
	return false
}

// TestAppOfAppsChildCannotTakeOverAnotherOwnersApp: an app of apps whose Git
// names an app of a user, or a child of another app of apps, is refused by
// that app: the parent's status names the child and its owner, and the app
// keeps its spec and its objects. A user's plain apply of a parent's child
// is refused too; --force-adopt makes it theirs, and its parent is refused
// from then on.
func TestAppOfAppsChildCannotTakeOverAnotherOwnersApp(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "owners")
	evil := func(name string) string {
		return strings.Replace(childApp(name, repo.URL), "path: "+name+"\n", "path: evil\n", 1)
	}
	repo.write(map[string]string{
		"payments/cm.yaml":     configMap("payments", "v1"),
		"shared/cm.yaml":       configMap("shared", "v1"),
		"evil/cm.yaml":         configMap("payments", "evil") + "---\n" + configMap("shared", "evil"),
		"team-a/shared.yaml":   childApp("shared", repo.URL),
		"team-b/payments.yaml": evil("payments"),
		"team-b/shared.yaml":   evil("shared"),
	})
	sha := repo.commitAndPush("two teams")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("payments", repo.URL, "payments", "payments", true, "3m")))
	waitApp(t, "payments", sha, 2*time.Minute)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("team-a", repo.URL, "team-a", "owners-a", true, "3m")))
	waitApp(t, "shared", sha, 2*time.Minute)
	waitApp(t, "team-a", sha, time.Minute)

	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("team-b", repo.URL, "team-b", "owners-b", true, "3m")))
	c := temporalClient(t)
	refused := map[string]string{
		"payments": `app "payments" is owned by a user (ferry app apply): app of apps "team-b" cannot change or delete it`,
		"shared":   `app "shared" is owned by app of apps "team-a": app of apps "team-b" cannot change or delete it`,
	}
	eventually(t, 2*time.Minute, "team-b's sync refused for both children", func() (bool, string) {
		v, err := queryView(t, c, "team-b")
		if err != nil {
			return false, err.Error()
		}
		op := v.Status.OperationState
		if op == nil || op.Phase != app.OperationFailed {
			return false, fmt.Sprintf("operation %+v", op)
		}
		for name, want := range refused {
			if !strings.Contains(op.Message, want) {
				return false, "operation message: " + op.Message
			}
			row := childRow(&v.Status, name)
			if row == nil || row.Status != app.SyncStatusOutOfSync || row.Health != app.HealthDegraded || !strings.Contains(row.Message, want) {
				return false, fmt.Sprintf("row of %s: %+v", name, row)
			}
		}
		return v.Status.Health.Status == app.HealthDegraded, "health " + string(v.Status.Health.Status)
	})
	unchanged := func(name, path string, owner contract.Owner) {
		t.Helper()
		v, err := queryView(t, c, name)
		require.NoError(t, err)
		require.Equal(t, path, v.Spec.Source.Path, "app %s keeps its spec", name)
		require.Equal(t, &owner, v.Owner, "app %s keeps its owner", name)
		require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status, "app %s", name)
		for _, r := range regions {
			cm, err := kubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "v1", cm.Data["version"], "%s's ConfigMap in %s", name, r)
		}
	}
	unchanged("payments", "payments", contract.Owner{})
	unchanged("shared", "shared", contract.Owner{Parent: "team-a"})

	// A user's plain apply of team-a's child is refused, naming the owner.
	userShared := writeFile(t, strings.Replace(appYAML("shared", repo.URL, "shared", "shared", true, "3m"), "3m", "2m", 1))
	out, err := ferry(t, "app", "apply", "-f", userShared)
	require.Error(t, err, out)
	require.Contains(t, out, `app "shared" is owned by app of apps "team-a"`)
	require.Contains(t, out, "--force-adopt")
	unchanged("shared", "shared", contract.Owner{Parent: "team-a"})
	require.Contains(t, mustFerry(t, "app", "get", "shared"), `app of apps "team-a"`)

	// --force-adopt: the user's now; team-a is refused at its next sync.
	mustFerry(t, "app", "apply", "-f", userShared, "--force-adopt")
	v, err := queryView(t, c, "shared")
	require.NoError(t, err)
	require.Equal(t, &contract.Owner{}, v.Owner)
	require.Equal(t, "2m", v.Spec.PollInterval)
	mustFerry(t, "app", "refresh", "team-a")
	eventually(t, time.Minute, "team-a finds shared adopted", func() (bool, string) {
		v, err := queryView(t, c, "team-a")
		if err != nil {
			return false, err.Error()
		}
		row := childRow(&v.Status, "shared")
		return row != nil && strings.Contains(row.Message, `app "shared" is owned by a user`), fmt.Sprintf("%+v", row)
	})
	for _, name := range []string{"team-b", "team-a"} {
		mustFerry(t, "app", "delete", name)
	}
	for _, name := range []string{"shared", "payments"} {
		mustFerry(t, "app", "delete", name, "--cascade")
	}
}

func childRow(st *app.Status, name string) *app.ResourceStatus {
	for i, r := range st.Resources {
		if r.Kind == app.Kind && r.Name == name {
			return &st.Resources[i]
		}
	}
	return nil
}
