package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// hookJobYAML is a Job hook of the given phase and delete policy; failing
// labels its pod so that the local stack's kwok fails it.
func hookJobYAML(name, phase, policy string, failing bool) string {
	labels := "{}"
	if failing {
		labels = fmt.Sprintf("{%s: \"true\"}", devenv.FailLabel)
	}
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  annotations:
    argocd.argoproj.io/hook: %s
    argocd.argoproj.io/hook-delete-policy: %s
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: %s
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`, name, phase, policy, labels)
}

// jobTimes records, per region, when each Job of a namespace completed,
// from a watch started before the sync: HookSucceeded deletes them after.
type jobTimes struct {
	mu     sync.Mutex
	done   map[string]map[string]time.Time // region -> job -> completionTime
	cancel context.CancelFunc
}

func watchJobs(t *testing.T, ns string) *jobTimes {
	ctx, cancel := context.WithCancel(context.Background())
	jt := &jobTimes{done: map[string]map[string]time.Time{}, cancel: cancel}
	t.Cleanup(cancel)
	for _, r := range regions {
		jt.done[r] = map[string]time.Time{}
		w, err := kubeClient(t, r).BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		go func(region string) {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if j, ok := ev.Object.(*batchv1.Job); ok && j.Status.CompletionTime != nil {
					jt.mu.Lock()
					jt.done[region][j.Name] = j.Status.CompletionTime.Time
					jt.mu.Unlock()
				}
			}
		}(r)
	}
	return jt
}

// stop ends the watches and returns what they saw.
func (jt *jobTimes) stop() map[string]map[string]time.Time {
	jt.cancel()
	jt.mu.Lock()
	defer jt.mu.Unlock()
	return jt.done
}

func lastOp(t *testing.T, name string) *app.OperationState {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	require.NotNil(t, v.Status.OperationState)
	return v.Status.OperationState
}

// pollOp is lastOp for a condition that is polled: a query that fails
// (the server cancels one now and then under load: "stream terminated by
// RST_STREAM") or an app without an operation yet is nil with why, and
// the poll goes on.
func pollOp(t *testing.T, name string) (*app.OperationState, string) {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	switch {
	case err != nil:
		return nil, "query: " + err.Error()
	case v.Status.OperationState == nil:
		return nil, "no operation yet"
	}
	return v.Status.OperationState, ""
}

// postSyncRan says, from the PostSync workflow's history, what each
// region's RunHooks activity answered: for a failure message that shows
// where a region's hook result went.
func postSyncRan(t *testing.T, workflowID string) string {
	t.Helper()
	it := temporalClient(t).GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	var out []string
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return fmt.Sprintf("history of %s: %v", workflowID, err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			var in contract.RunHooksInput
			_ = converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in)
			scheduled[ev.EventId] = a.GetActivityType().GetName() + " " + in.Region
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			out = append(out, fmt.Sprintf("%s: attempt %d started", scheduled[a.GetScheduledEventId()], a.GetAttempt()))
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			var res contract.RunHooksResult
			_ = converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &res)
			out = append(out, fmt.Sprintf("%s: completed with %+v", scheduled[a.GetScheduledEventId()], res.Hooks))
		}
		if a := ev.GetActivityTaskFailedEventAttributes(); a != nil {
			out = append(out, fmt.Sprintf("%s: failed: %v", scheduled[a.GetScheduledEventId()], a.GetFailure().GetMessage()))
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
			out = append(out, fmt.Sprintf("%s: timed out: %v", scheduled[a.GetScheduledEventId()], a.GetFailure().GetMessage()))
		}
	}
	return strings.Join(out, "\n")
}

func hookResults(op *app.OperationState, phase string) []string {
	var out []string
	for _, r := range op.Results {
		if r.HookType == phase {
			out = append(out, fmt.Sprintf("%s %s/%s %s", r.Region, r.Kind, r.Name, r.HookPhase))
		}
	}
	return out
}

func jobGone(t *testing.T, region, ns, name string) (bool, string) {
	_, err := kubeClient(t, region).BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, ""
	}
	return false, fmt.Sprintf("Job %s/%s still in %s (%v)", ns, name, region, err)
}

// TestPreSyncAndPostSyncHooks syncs Argo CD's pre-post-sync example
// (Kustomize over kustomize-guestbook): its PreSync Job completes before
// the Deployment is created, in every region; the operation completes with
// the PostSync hooks still ahead, in a child workflow of their own that
// reports back; HookSucceeded deletes both Jobs.
func TestPreSyncAndPostSyncHooks(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "hooks")
	repo.copyDir(filepath.Join(corpus, "pre-post-sync"), "pre-post-sync")
	repo.copyDir(filepath.Join(corpus, "kustomize-guestbook"), "kustomize-guestbook")
	sha := repo.commitAndPush("Argo CD's pre-post-sync example")
	jobs := watchJobs(t, "hooks")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("hooks", repo.URL, "pre-post-sync", "hooks", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "hooks")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	out := mustFerry(t, "app", "sync", "hooks", "--wait")
	t.Log(out)
	op := lastOp(t, "hooks")
	require.Equal(t, app.OperationSucceeded, op.Phase, op.Message)
	require.ElementsMatch(t, []string{"us-east-1 Job/pre-post-sync-before Succeeded", "eu-west-1 Job/pre-post-sync-before Succeeded"},
		hookResults(op, contract.HookPreSync))

	// The operation is done; its PostSync hooks run in a workflow of their
	// own, started once every region is Synced and Healthy.
	require.NotNil(t, op.PostSync, "PostSync hooks pending or running")
	eventually(t, 2*time.Minute, "PostSync outcome in the app's status", func() (bool, string) {
		got, why := pollOp(t, "hooks")
		if got == nil || got.PostSync == nil {
			return false, why
		}
		op = got
		return op.PostSync.Phase == app.OperationSucceeded, fmt.Sprintf("%s: %s", op.PostSync.Phase, op.PostSync.Message)
	})
	require.Regexp(t, `^app/hooks/postsync/1-[0-9a-f]{8}$`, op.PostSync.WorkflowID)
	if len(op.PostSync.Results) != 2 {
		t.Logf("PostSync %s: %s; results %+v; its workflow's activities:\n%s", op.PostSync.Phase, op.PostSync.Message,
			op.PostSync.Results, postSyncRan(t, op.PostSync.WorkflowID))
	}
	require.Len(t, op.PostSync.Results, 2, "one PostSync Job per region")
	// The PostSync workflow reports its outcome to the app, then closes: the
	// app may show the outcome a moment before the workflow is closed.
	var info *workflowpb.WorkflowExecutionInfo
	eventually(t, 30*time.Second, "the PostSync workflow completed", func() (bool, string) {
		desc, err := c.DescribeWorkflowExecution(context.Background(), op.PostSync.WorkflowID, "")
		if err != nil {
			return false, err.Error()
		}
		info = desc.WorkflowExecutionInfo
		return info.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, info.Status.String()
	})
	require.Equal(t, contract.PostSyncWorkflow, info.Type.Name)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, info.Status)
	require.NotNil(t, info.ParentExecution, "linked to its parent")
	require.Equal(t, contract.WorkflowID("hooks"), info.ParentExecution.WorkflowId)
	require.True(t, info.CloseTime.AsTime().After(*op.FinishedAt), "the operation finished (%s) before its PostSync workflow did (%s)",
		op.FinishedAt, info.CloseTime.AsTime())
	require.Equal(t, enumspb.PARENT_CLOSE_POLICY_ABANDON, childClosePolicy(t, "hooks", op.PostSync.WorkflowID))

	for _, r := range regions {
		eventually(t, time.Minute, "HookSucceeded deletes the hooks in "+r, func() (bool, string) {
			gone1, s1 := jobGone(t, r, "hooks", "pre-post-sync-before")
			gone2, s2 := jobGone(t, r, "hooks", "pre-post-sync-after")
			return gone1 && gone2, s1 + s2
		})
	}
	done := jobs.stop()
	for _, r := range regions {
		d, err := kubeClient(t, r).AppsV1().Deployments("hooks").Get(context.Background(), "pre-post-sync-kustomize-guestbook-ui", metav1.GetOptions{})
		require.NoError(t, err)
		before, after := done[r]["pre-post-sync-before"], done[r]["pre-post-sync-after"]
		require.False(t, before.IsZero(), "the PreSync Job completed in %s", r)
		require.False(t, d.CreationTimestamp.Time.Before(before), "%s: the Deployment (created %s) came after the PreSync Job completed (%s)",
			r, d.CreationTimestamp.Time, before)
		require.False(t, after.Before(d.CreationTimestamp.Time), "%s: the PostSync Job completed after the Deployment was created", r)
		for _, cond := range d.Status.Conditions {
			if cond.Type == "Available" && cond.Status == corev1.ConditionTrue {
				require.False(t, after.Before(cond.LastTransitionTime.Time), "%s: PostSync after the Deployment became Available", r)
			}
		}
	}
	waitApp(t, "hooks", sha, time.Minute)
	mustFerry(t, "app", "delete", "hooks", "--cascade")
	recordHistories(t, "hooks")
	recordWorkflowHistories(t, op.PostSync.WorkflowID, "hooks-postsync")
}

// childClosePolicy is the parent-close policy the app's history gave the
// child workflow id.
func childClosePolicy(t *testing.T, name, id string) enumspb.ParentClosePolicy {
	t.Helper()
	for _, ev := range events(t, temporalClient(t), name) {
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && a.WorkflowId == id {
			return a.ParentClosePolicy
		}
	}
	t.Fatalf("no child workflow %s in the history of app %s", id, name)
	return 0
}

// TestAFailedPreSyncHookStopsTheSync: the PreSync Job fails (kwok fails its
// labelled pod); the operation is Failed with the hook's and the pod's
// reasons, the SyncFail hook ran, nothing of the Sync phase exists, and
// HookFailed deleted the failed Job.
func TestAFailedPreSyncHookStopsTheSync(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "hookfail")
	repo.write(map[string]string{
		"app/migrate.yaml": hookJobYAML("migrate", "PreSync", "HookFailed", true),
		"app/notify.yaml":  hookJobYAML("notify-failure", "SyncFail", "BeforeHookCreation", false),
		"app/cm.yaml":      configMap("settings", "v1"),
	})
	repo.commitAndPush("a PreSync hook that fails")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("hookfail", repo.URL, "app", "hookfail", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "hookfail")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	out, err := ferry(t, "app", "sync", "hookfail", "--wait")
	require.Error(t, err, "the sync fails: %s", out)
	t.Log(out)
	op := lastOp(t, "hookfail")
	require.Equal(t, app.OperationFailed, op.Phase)
	require.Contains(t, op.Message, "PreSync hook Job/hookfail/migrate failed: BackoffLimitExceeded")
	require.Contains(t, op.Message, `container "main" exited with code 1 (Error): failed on purpose`)
	require.Contains(t, op.Message, "nothing of the Sync phase was applied")
	require.ElementsMatch(t, []string{"us-east-1 Job/notify-failure Succeeded", "eu-west-1 Job/notify-failure Succeeded"},
		hookResults(op, contract.HookSyncFail))
	require.Nil(t, op.PostSync)
	for _, r := range regions {
		cs := kubeClient(t, r)
		_, err := cs.CoreV1().ConfigMaps("hookfail").Get(context.Background(), "settings", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "nothing of the Sync phase in %s: %v", r, err)
		j, err := cs.BatchV1().Jobs("hookfail").Get(context.Background(), "notify-failure", metav1.GetOptions{})
		require.NoError(t, err, "the SyncFail hook ran in %s (and BeforeHookCreation keeps it)", r)
		require.Regexp(t, `^1-[0-9a-f]{8}/SyncFail$`, j.Annotations["ferry.dev/hook-operation"])
		eventually(t, 30*time.Second, "HookFailed deletes the failed hook in "+r, func() (bool, string) {
			return jobGone(t, r, "hookfail", "migrate")
		})
	}
	mustFerry(t, "app", "delete", "hookfail", "--cascade")
}

// TestSyncWaveHooksAndBeforeHookCreation syncs Argo CD's sync-waves example
// twice: Sync hooks run between the waves around them, a generateName
// PreSync hook gets a name per operation, and BeforeHookCreation replaces
// the previous operation's named hook.
func TestSyncWaveHooksAndBeforeHookCreation(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "waves")
	repo.copyDir(filepath.Join(corpus, "sync-waves"), "sync-waves")
	repo.commitAndPush("Argo CD's sync-waves example")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("waves", repo.URL, "sync-waves", "waves", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "waves")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	mustFerry(t, "app", "sync", "waves", "--wait")
	first := map[string]string{}
	schema := regexp.MustCompile(`^upgrade-sql-schema[a-z0-9]{5}$`)
	for _, r := range regions {
		cs := kubeClient(t, r)
		created := func(kind, name string) time.Time {
			var meta metav1.Object
			var err error
			switch kind {
			case "Job":
				meta, err = cs.BatchV1().Jobs("waves").Get(context.Background(), name, metav1.GetOptions{})
			default:
				meta, err = cs.AppsV1().ReplicaSets("waves").Get(context.Background(), name, metav1.GetOptions{})
			}
			require.NoError(t, err, "%s %s in %s", kind, name, r)
			if name == "maint-page-up" {
				first[r] = string(meta.GetUID())
			}
			return meta.GetCreationTimestamp().Time
		}
		list, err := cs.BatchV1().Jobs("waves").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		var presync string
		for _, j := range list.Items {
			if schema.MatchString(j.Name) {
				presync = j.Name
			}
		}
		require.NotEmpty(t, presync, "the generateName PreSync hook ran in %s", r)
		order := []time.Time{created("Job", presync), created("ReplicaSet", "backend"), created("Job", "maint-page-up"),
			created("ReplicaSet", "frontend"), created("Job", "maint-page-down")}
		for i := 1; i < len(order); i++ {
			require.False(t, order[i].Before(order[i-1]), "%s: step %d created before step %d: %v", r, i, i-1, order)
		}
	}
	mustFerry(t, "app", "sync", "waves", "--wait")
	for _, r := range regions {
		j, err := kubeClient(t, r).BatchV1().Jobs("waves").Get(context.Background(), "maint-page-up", metav1.GetOptions{})
		require.NoError(t, err)
		require.NotEqual(t, first[r], string(j.UID), "BeforeHookCreation replaced the first operation's hook in %s", r)
		require.True(t, strings.HasPrefix(j.Annotations["ferry.dev/hook-operation"], "2-"), j.Annotations)
		list, err := kubeClient(t, r).BatchV1().Jobs("waves").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		n := 0
		for _, j := range list.Items {
			if schema.MatchString(j.Name) {
				n++
			}
		}
		require.Equal(t, 2, n, "a generateName hook gets another name per operation in %s", r)
	}
	mustFerry(t, "app", "delete", "waves", "--cascade")
}
