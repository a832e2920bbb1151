package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// The failure paths of a sync, on Argo CD's semantics (its hook and
// sync-wave e2e tests): the operation's results list every resource, the
// one that failed with the reason, also when the sync fails.

// resultsOf lists an operation's results as "region Kind/name action".
func resultsOf(op *app.OperationState) []string {
	var out []string
	for _, r := range op.Results {
		out = append(out, fmt.Sprintf("%s %s/%s %s", r.Region, r.Kind, r.Name, r.Action))
	}
	return out
}

func resultOf(op *app.OperationState, region, kind, name string) (app.ResourceResult, bool) {
	for _, r := range op.Results {
		if r.Region == region && r.Kind == kind && r.Name == name {
			return r, true
		}
	}
	return app.ResourceResult{}, false
}

// inWave puts manifest, one object, in sync wave wave.
func inWave(manifest, wave string) string {
	return strings.Replace(manifest, "metadata:\n", "metadata:\n  annotations: {argocd.argoproj.io/sync-wave: \""+wave+"\"}\n", 1)
}

func failingPod(name, wave string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {%s: "true"}
  annotations: {argocd.argoproj.io/sync-wave: "%s"}
spec:
  restartPolicy: Never
  containers: [{name: main, image: busybox:1.36}]
`, name, devenv.FailLabel, wave)
}

// syncFails runs a manual sync that must fail and returns its operation.
func syncFails(t *testing.T, name string) *app.OperationState {
	t.Helper()
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	out, err := ferry(t, "app", "sync", name, "--wait")
	require.Error(t, err, "the sync fails: %s", out)
	op := lastOp(t, name)
	require.Equal(t, app.OperationFailed, op.Phase, op.Message)
	return op
}

// TestAFailingSyncHookKeepsEveryResult: a Sync hook fails; the operation
// is Failed, and its results hold both the object the sync applied and the
// hook, in every region.
func TestAFailingSyncHookKeepsEveryResult(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "synchookfail")
	repo.write(map[string]string{
		"app/cm.yaml":   configMap("settings", "v1"),
		"app/hook.yaml": hookJobYAML("check", "Sync", "BeforeHookCreation", true),
	})
	repo.commitAndPush("a Sync hook that fails")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("synchookfail", repo.URL, "app", "synchookfail", false, "3m")))
	op := syncFails(t, "synchookfail")
	require.Contains(t, op.Message, "Sync hook Job/synchookfail/check failed: BackoffLimitExceeded")
	for _, r := range regions {
		cm, ok := resultOf(op, r, "ConfigMap", "settings")
		require.True(t, ok, "the applied ConfigMap's result in %s: %v", r, resultsOf(op))
		require.Equal(t, app.ActionCreated, cm.Action)
		hook, ok := resultOf(op, r, "Job", "check")
		require.True(t, ok, "the hook's result in %s: %v", r, resultsOf(op))
		require.Equal(t, contract.HookSync, hook.HookType)
		require.Equal(t, "Failed", hook.HookPhase)
	}
	mustFerry(t, "app", "delete", "synchookfail", "--cascade")
	recordHistories(t, "synchookfail")
}

// TestAFailingWaveKeepsItsResultsAndTheStatusShowsWhy: a Pod of wave 0
// fails, so wave 1 is never applied. The operation's results hold the Pod
// with its reason; right after the sync, with no refresh, the app is
// OutOfSync and Degraded with each resource's state, and no region is
// called unreachable: each answered.
func TestAFailingWaveKeepsItsResultsAndTheStatusShowsWhy(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "wavefail")
	repo.write(map[string]string{
		"app/pod.yaml": failingPod("fails", "0"),
		"app/cm.yaml":  inWave(configMap("later", "v1"), "1"),
	})
	repo.commitAndPush("a wave that fails")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("wavefail", repo.URL, "app", "wavefail", false, "3m")))
	op := syncFails(t, "wavefail")
	require.Contains(t, op.Message, "wave 0 is not healthy")
	v, err := queryView(t, temporalClient(t), "wavefail")
	require.NoError(t, err)
	st := v.Status
	for _, r := range regions {
		pod, ok := resultOf(op, r, "Pod", "fails")
		require.True(t, ok, "the Pod's result in %s: %v", r, resultsOf(op))
		require.Equal(t, app.ActionCreated, pod.Action)
		require.Contains(t, pod.Message, "Degraded", "the result says why")
		_, applied := resultOf(op, r, "ConfigMap", "later")
		require.False(t, applied, "wave 1 was not applied in %s", r)
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("wavefail").Get(context.Background(), "later", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "wave 1 is not in %s: %v", r, err)
		require.Equal(t, app.SyncStatusOutOfSync, st.Regions[r].Sync, "%s: %+v", r, st.Regions[r])
		require.Equal(t, app.HealthDegraded, st.Regions[r].Health, "%s: %+v", r, st.Regions[r])
		require.False(t, st.Regions[r].Unreachable, r)
	}
	require.Equal(t, app.SyncStatusOutOfSync, st.Sync.Status)
	require.Equal(t, app.HealthDegraded, st.Health.Status)
	for _, c := range st.Conditions {
		require.NotEqual(t, "RegionUnreachable", c.Type, "every region answered: %+v", st.Conditions)
	}
	states := map[string]string{}
	for _, res := range st.Resources {
		states[res.Region+" "+res.Kind+"/"+res.Name] = string(res.Status) + "/" + string(res.Health)
	}
	for _, r := range regions {
		require.Equal(t, "Synced/Degraded", states[r+" Pod/fails"], "%v", states)
		require.Equal(t, "OutOfSync/Missing", states[r+" ConfigMap/later"], "%v", states)
	}
	mustFerry(t, "app", "delete", "wavefail", "--cascade")
	recordHistories(t, "wavefail")
}

// TestCreateNamespaceWithAnInvalidObject: CreateNamespace=true and a
// ServiceAccount the API server refuses: the results show the Namespace
// created and the ServiceAccount failed with the server's message.
func TestCreateNamespaceWithAnInvalidObject(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "nsinvalid")
	repo.write(map[string]string{"app/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: Bad_Name\n"})
	repo.commitAndPush("an invalid ServiceAccount")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("nsinvalid", repo.URL, "app", "nsinvalid", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "nsinvalid")
		return err == nil && v.Status.ReconciledAt != nil, fmt.Sprint(err)
	})
	out, err := ferry(t, "app", "sync", "nsinvalid", "--wait")
	require.Error(t, err, "the sync fails: %s", out)
	op := lastOp(t, "nsinvalid")
	require.Equal(t, app.OperationFailed, op.Phase, op.Message)
	for _, r := range regions {
		ns, ok := resultOf(op, r, "Namespace", "nsinvalid")
		require.True(t, ok, "the Namespace's result in %s: %v", r, resultsOf(op))
		require.Equal(t, app.ActionCreated, ns.Action)
		sa, ok := resultOf(op, r, "ServiceAccount", "Bad_Name")
		require.True(t, ok, "the ServiceAccount's result in %s: %v", r, resultsOf(op))
		require.Equal(t, app.ActionFailed, sa.Action)
		require.Contains(t, sa.Message, "Invalid value")
	}
	require.Contains(t, out, "Bad_Name", "ferry app sync prints the results")
	mustFerry(t, "app", "delete", "nsinvalid", "--cascade")
}

// TestADeploymentThatCannotProgressEndsTheOperation: the operation ends
// once the last wave is applied, as Argo CD's does, Succeeded; the app
// shows the Deployment Progressing rather than waiting for it, and past
// its progress deadline Degraded, with the reason.
func TestADeploymentThatCannotProgressEndsTheOperation(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "noprogress")
	repo.write(map[string]string{"app/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  progressDeadlineSeconds: 20
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {pool: none-such}
      containers: [{name: web, image: registry.invalid/web:v1}]
`})
	repo.commitAndPush("a Deployment whose pod has no node")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("noprogress", repo.URL, "app", "noprogress", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "noprogress")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	out := mustFerry(t, "app", "sync", "noprogress", "--wait")
	v, err := queryView(t, c, "noprogress")
	require.NoError(t, err)
	op := v.Status.OperationState
	require.Equal(t, app.OperationSucceeded, op.Phase, "%s\n%s", op.Message, out)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status)
	require.Equal(t, app.HealthProgressing, v.Status.Health.Status, "the operation did not wait for the Deployment: %+v", v.Status.Resources)

	// Past its progress deadline the Deployment is Degraded, and the app
	// says why: health.message, and the MESSAGE column of ferry app get.
	// The app is Degraded as soon as one region is; each region's compare
	// sees its own Deployment pass the deadline, so wait for every one.
	var get string
	eventually(t, 2*time.Minute, "the Deployment Degraded in every region", func() (bool, string) {
		v, err := queryView(t, c, "noprogress")
		if err != nil || v.Status.Health.Status != app.HealthDegraded {
			return false, fmt.Sprint(err)
		}
		get = mustFerry(t, "app", "get", "noprogress")
		for _, r := range regions {
			if !regexp.MustCompile(r + `\s+apps\s+Deployment\s+noprogress\s+web\s+Synced\s+Degraded\s+deployment "web" exceeded its progress deadline`).MatchString(get) {
				return false, get
			}
		}
		return true, ""
	})
	for _, r := range regions {
		require.Regexp(t, r+`\s+apps\s+Deployment\s+noprogress\s+web\s+Synced\s+Degraded\s+deployment "web" exceeded its progress deadline`, get)
	}
	asJSON := mustFerry(t, "app", "get", "noprogress", "-o", "json")
	require.Contains(t, asJSON, `"health": {
          "status": "Degraded",
          "message": "deployment \"web\" exceeded its progress deadline"
        }`, "health.message, as Argo CD's")
	mustFerry(t, "app", "delete", "noprogress", "--cascade")
}
