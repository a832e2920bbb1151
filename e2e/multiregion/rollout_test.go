package multiregion

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// poolLabel marks the Nodes of a node pool that version 2 of the web app
// asks for with its nodeSelector.
const poolLabel = "pool.ferry.dev/web"

// webDeployment is the web app at an image tag; pool, when set, pins its
// pods to the Nodes labelled poolLabel=pool, with a progress deadline so
// short that where there is no such Node it is Degraded soon.
func webDeployment(tag, pool string) string {
	selector, deadline := "", 300
	if pool != "" {
		selector, deadline = fmt.Sprintf("      nodeSelector: {%s: %s}\n", poolLabel, pool), 10
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  progressDeadlineSeconds: %d
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
%s      containers:
        - name: main
          image: registry.invalid/web:%s
`, deadline, selector, tag)
}

// TestRolloutHaltsAtFailingFirstStage: stages [[us-east-1], [eu-west-1,
// ap-south-1]]. Version 2 asks for a node pool that eu-west-1 and
// ap-south-1 have and us-east-1 lacks: its pod cannot be scheduled there,
// the Deployment exceeds its progress deadline (Degraded), and the rollout
// halts at stage 1, leaving the other regions on version 1, which they keep
// through the app's later polls. A fixing commit (no nodeSelector) rolls out
// through both stages.
func TestRolloutHaltsAtFailingFirstStage(t *testing.T) {
	e := newEnv(t)
	began := time.Now()
	e.StartWorker(t, e.AllRoles()...)
	const name = "staged"
	stages := [][]string{{"us-east-1"}, {"eu-west-1", "ap-south-1"}}
	later := stages[1]
	for _, r := range later {
		labelNode(t, e, r, "big")
	}

	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/web.yaml": webDeployment("v1", "")})
	sha1 := repo.CommitAndPush("v1")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions,
		Automated: true, Poll: "5s", Stages: stages})
	st := e.WaitApp(t, name, sha1, 3*time.Minute)
	require.NotNil(t, st.Rollout)
	require.Equal(t, app.RolloutCompleted, st.Rollout.Phase, e2etest.Describe(st))
	for _, r := range regions {
		require.Equal(t, "registry.invalid/web:v1", image(t, e, r), "region %s", r)
	}
	t.Logf("v1 rolled out to every region after %s", time.Since(began).Round(time.Second))

	repo.Write(map[string]string{"app/web.yaml": webDeployment("v2", "big")})
	sha2 := repo.CommitAndPush("v2 on the big node pool")
	c := e.TemporalClient(t)
	var halted *app.Status
	e2etest.Eventually(t, 4*time.Minute, "rollout of v2 halted at stage 1", func() (bool, string) {
		v, err := e2etest.Query(c, name)
		if err != nil {
			return false, err.Error()
		}
		halted = &v.Status
		ro := v.Status.Rollout
		return ro != nil && ro.Revision == sha2 && ro.Phase == app.RolloutHalted, e2etest.Describe(&v.Status)
	})
	t.Logf("v2 halted after %s: %s", time.Since(began).Round(time.Second), halted.Rollout.Message)
	require.Equal(t, 1, halted.Rollout.Stage)
	require.Contains(t, halted.Rollout.Message, "us-east-1")
	require.Equal(t, app.OperationFailed, halted.OperationState.Phase)
	us := halted.Regions["us-east-1"]
	require.Equal(t, app.HealthDegraded, us.Health, "us-east-1: %+v", us)
	require.Equal(t, sha2, us.Revision)
	// Why: version 2's pod cannot be scheduled in us-east-1, which has no
	// Node in the pool.
	pods, err := e.KubeClient(t, "us-east-1").CoreV1().Pods(name).List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	pending := 0
	for _, p := range pods.Items {
		if p.Spec.NodeSelector[poolLabel] != "" {
			require.Equal(t, corev1.PodPending, p.Status.Phase, "pod %s", p.Name)
			pending++
		}
	}
	require.Equal(t, 1, pending, "one version 2 pod, Pending, in us-east-1")
	get := e.MustFerry(t, "app", "get", name)
	require.Contains(t, get, "Rollout:       stage 1/2 Halted", get)

	// The later stages keep version 1, also through the app's next polls.
	reconciled, haltedOp := *halted.ReconciledAt, halted.OperationState.ID
	for polls := 0; polls < 2; polls++ {
		e2etest.Eventually(t, time.Minute, "the app polls again", func() (bool, string) {
			v, err := e2etest.Query(c, name)
			if err != nil {
				return false, err.Error()
			}
			if v.Status.ReconciledAt == nil || !v.Status.ReconciledAt.After(reconciled) {
				return false, e2etest.Describe(&v.Status)
			}
			reconciled = *v.Status.ReconciledAt
			halted = &v.Status
			return true, ""
		})
	}
	require.Equal(t, app.RolloutHalted, halted.Rollout.Phase, e2etest.Describe(halted))
	require.Equal(t, haltedOp, halted.OperationState.ID, "no new operation for the same revision")
	for _, r := range later {
		require.Equal(t, "registry.invalid/web:v1", image(t, e, r), "region %s keeps version 1", r)
		// The region's revision is the one it was compared with: it is
		// OutOfSync with version 2.
		require.Equal(t, app.SyncStatusOutOfSync, halted.Regions[r].Sync, "region %s: %s", r, e2etest.Describe(halted))
		require.Equal(t, sha1, halted.Regions[r].SyncedRevision, "region %s runs version 1's commit", r)
	}
	require.Equal(t, "registry.invalid/web:v2", image(t, e, "us-east-1"), "stage 1 got version 2")

	// The fix: version 2 without the node pool.
	repo.Write(map[string]string{"app/web.yaml": webDeployment("v2", "")})
	sha3 := repo.CommitAndPush("v2 on any node")
	st = e.WaitApp(t, name, sha3, 4*time.Minute)
	require.NotNil(t, st.Rollout)
	require.Equal(t, app.RolloutCompleted, st.Rollout.Phase, e2etest.Describe(st))
	require.Equal(t, sha3, st.Rollout.Revision)
	t.Logf("the fix rolled out to every region after %s", time.Since(began).Round(time.Second))
	for _, r := range regions {
		require.Equal(t, "registry.invalid/web:v2", image(t, e, r), "region %s", r)
		d, err := e.KubeClient(t, r).AppsV1().Deployments(name).Get(context.Background(), "web", metav1.GetOptions{})
		require.NoError(t, err)
		require.Empty(t, d.Spec.Template.Spec.NodeSelector, "region %s", r)
		require.EqualValues(t, 1, d.Status.AvailableReplicas, "region %s", r)
	}
	e.RecordHistories(t, contract.WorkflowID(name), name)
	e.MustFerry(t, "app", "delete", name, "--cascade")
}

// image is the image of the web Deployment's container in a region.
func image(t *testing.T, e *e2etest.Env, region string) string {
	t.Helper()
	d, err := e.KubeClient(t, region).AppsV1().Deployments("staged").Get(context.Background(), "web", metav1.GetOptions{})
	require.NoError(t, err, "region %s", region)
	return containerImage(d)
}

func containerImage(d *appsv1.Deployment) string {
	var images []string
	for _, c := range d.Spec.Template.Spec.Containers {
		images = append(images, c.Image)
	}
	return strings.Join(images, ",")
}

// labelNode puts the region's fake Node in a node pool until the test ends.
func labelNode(t *testing.T, e *e2etest.Env, region, pool string) {
	t.Helper()
	cs := e.KubeClient(t, region)
	node := "kwok-" + region
	patch := func(value string) error {
		_, err := cs.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType,
			[]byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, poolLabel, value)), metav1.PatchOptions{})
		return err
	}
	require.NoError(t, patch(fmt.Sprintf("%q", pool)))
	t.Cleanup(func() { _ = patch("null") })
}
