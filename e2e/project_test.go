package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

const clusterRoleBinding = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: team-a-takes-over
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {kind: ServiceAccount, name: default, namespace: team-a}
`

func teamAProject(repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-a
  namespace: argocd
spec:
  description: Team A deploys its own repo to its own namespace
  sourceRepos: [%s]
  destinations:
  - {name: us-east-1, namespace: team-a}
`, repoURL)
}

func projectAppYAML(name, repoURL, region, namespace string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  project: team-a
  source: {repoURL: %s, targetRevision: main, path: app}
  destination: {name: %s, namespace: %s}
  syncPolicy:
    syncOptions: [CreateNamespace=true]
`, name, repoURL, region, namespace)
}

// TestProjectEnforcedInTheRegion: project team-a allows one repo, namespace
// team-a of us-east-1 and no cluster-scoped kind. An app going elsewhere is
// refused when applied; an app whose repo adds a ClusterRoleBinding fails
// its sync in us-east-1 naming the project, the kind and the rule, and the
// API server holds nothing of that sync; without it the app syncs. The
// project cannot be deleted while the app uses it.
func TestProjectEnforcedInTheRegion(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "team-a")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/crb.yaml": clusterRoleBinding})
	badSHA := repo.commitAndPush("a ClusterRoleBinding slipped in")

	mustFerry(t, "project", "apply", "-f", writeFile(t, teamAProject(repo.URL)))
	out := mustFerry(t, "project", "get", "team-a", "-o", "json")
	var v contract.ProjectView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Equal(t, []string{repo.URL}, v.Spec.SourceRepos)
	require.Contains(t, mustFerry(t, "project", "list"), "team-a")

	out, err := ferry(t, "app", "apply", "-f", writeFile(t, projectAppYAML("team-a-elsewhere", repo.URL, "eu-west-1", "kube-system")))
	require.Error(t, err, out)
	require.Contains(t, out, `app "team-a-elsewhere": project "team-a" does not allow destination eu-west-1/kube-system`)
	out, err = ferry(t, "app", "apply", "-f", writeFile(t, strings.Replace(projectAppYAML("team-a-nope", repo.URL, "us-east-1", "team-a"), "project: team-a", "project: team-z", 1)))
	require.Error(t, err, out)
	require.Contains(t, out, `project "team-z" not found`)

	// The project allows no cluster-scoped kind, so no Namespace either: a
	// sync may not create one (CreateNamespace=true), as in Argo CD.
	mustFerry(t, "app", "apply", "-f", writeFile(t, projectAppYAML("team-a-web", repo.URL, "us-east-1", "team-a")))
	c := temporalClient(t)
	cs := kubeClient(t, "us-east-1")
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "team-a-web")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	out, err = ferry(t, "app", "sync", "team-a-web", "--wait")
	require.Error(t, err, "the sync may not create namespace team-a: %s", out)
	require.Contains(t, lastOp(t, "team-a-web").Message, "Namespace team-a: cluster-scoped kind Namespace is not allowed (clusterResourceWhitelist)")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	_, err = cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	require.NoError(t, err, "the platform team creates the namespace")
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), "team-a", metav1.DeleteOptions{}) })

	out, err = ferry(t, "app", "sync", "team-a-web", "--wait")
	require.Error(t, err, "the sync fails: %s", out)
	op := lastOp(t, "team-a-web")
	require.Equal(t, app.OperationFailed, op.Phase)
	for _, want := range []string{`project "team-a"`, "ClusterRoleBinding.rbac.authorization.k8s.io team-a-takes-over",
		"cluster-scoped kind ClusterRoleBinding is not allowed (clusterResourceWhitelist)", "in region us-east-1", "nothing of this sync was applied"} {
		require.Contains(t, op.Message, want)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Get(context.Background(), "team-a-takes-over", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the ClusterRoleBinding is not in us-east-1: %v", err)
	_, err = cs.CoreV1().ConfigMaps("team-a").Get(context.Background(), "settings", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing else of the sync is in us-east-1 either: %v", err)

	out, err = ferry(t, "project", "delete", "team-a")
	require.Error(t, err, out)
	require.Contains(t, out, `project "team-a" is used by 1 app(s): team-a-web`)

	forged := syncInputOf(t, "team-a-web", badSHA)

	repo.git("rm", "-q", "app/crb.yaml")
	goodSHA := repo.commitAndPush("no ClusterRoleBinding")
	mustFerry(t, "app", "refresh", "team-a-web")
	out = mustFerry(t, "app", "sync", "team-a-web", "--revision", goodSHA, "--wait")
	t.Log(out)
	cm, err := cs.CoreV1().ConfigMaps("team-a").Get(context.Background(), "settings", metav1.GetOptions{})
	require.NoError(t, err, "the app without the ClusterRoleBinding syncs")
	require.Equal(t, "v1", cm.Data["version"])

	// A Temporal client schedules the bad sync on the region's queue
	// itself: the region worker reads the app's project and refuses it.
	forged.OperationID = "forged"
	err = scheduleSync(t, forged)
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, contract.ErrProjectDenied, appErr.Type())
	require.Contains(t, appErr.Error(), `project "team-a" does not allow ClusterRoleBinding.rbac.authorization.k8s.io team-a-takes-over`)
	_, err = cs.RbacV1().ClusterRoleBindings().Get(context.Background(), "team-a-takes-over", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the forged sync applied no ClusterRoleBinding: %v", err)

	recordHistories(t, "team-a-web")
	recordWorkflowHistories(t, contract.ProjectWorkflowID("team-a"), "project-team-a")
	mustFerry(t, "app", "delete", "team-a-web", "--cascade")
	mustFerry(t, "project", "delete", "team-a")
	out, err = ferry(t, "project", "get", "team-a")
	require.Error(t, err, out)
	require.Contains(t, out, `project "team-a" not found`)
}

// syncInputOf is the input of the app's first Sync of sha, from its
// history: what a forger with a Temporal client would send again.
func syncInputOf(t *testing.T, name, sha string) contract.SyncInput {
	t.Helper()
	c := temporalClient(t)
	dc := converter.GetDefaultDataConverter()
	for _, ev := range events(t, c, name) {
		attrs := ev.GetActivityTaskScheduledEventAttributes()
		if ev.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED || attrs.GetActivityType().GetName() != contract.ActivitySync {
			continue
		}
		var in contract.SyncInput
		require.NoError(t, dc.FromPayloads(attrs.GetInput(), &in))
		if in.Target.SHA == sha {
			return in
		}
	}
	t.Fatalf("app %s scheduled no Sync of %s", name, short(sha))
	return contract.SyncInput{}
}

// scheduleSync runs a Sync activity on the input's region queue from a
// workflow of the test's own, as any Temporal client could.
func scheduleSync(t *testing.T, in contract.SyncInput) error {
	t.Helper()
	c := temporalClient(t)
	queue := "e2e-forge-" + fmt.Sprint(time.Now().UnixNano())
	w := sdkworker.New(c, queue, sdkworker.Options{})
	forge := func(ctx workflow.Context, in contract.SyncInput) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: contract.RegionQueue(in.Region), StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		// A sync that fails for good says so inside its result (the
		// workflow reads it as the activity's error; so does this one).
		var res contract.SyncResult
		if err := workflow.ExecuteActivity(ctx, contract.ActivitySync, in).Get(ctx, &res); err != nil {
			return err
		}
		return res.Failure.Err()
	}
	w.RegisterWorkflowWithOptions(forge, workflow.RegisterOptions{Name: "ForgeSync"})
	require.NoError(t, w.Start())
	defer w.Stop()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, "ForgeSync", in)
	require.NoError(t, err)
	return run.Get(context.Background(), nil)
}
