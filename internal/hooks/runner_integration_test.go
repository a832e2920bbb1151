package hooks_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/hooks"
	"github.com/ferry-gitops/ferry/internal/kube"
)

const region = "us-east-1"

var stack *devenv.Stack

// TestMain starts one real control plane with kwok, on which Jobs complete
// in about a second and pods labelled ferry.dev/fail=true fail. With -short
// only the unit tests run.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{region}}, &stack))
}

var (
	jobs       = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

type env struct {
	t      *testing.T
	ctx    context.Context
	runner *hooks.Runner
	ns     string
}

// newEnv gives the test its own namespace, which is also its app's name.
func newEnv(t *testing.T) *env {
	t.Helper()
	if stack == nil {
		t.Skip("-short: no control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cfg, err := kube.LoadConfig(stack.Kubeconfig, region)
	require.NoError(t, err)
	cluster, err := kube.NewCluster(cfg)
	require.NoError(t, err)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	e := &env{t: t, ctx: ctx, ns: "hooks-" + hex.EncodeToString(b),
		runner: &hooks.Runner{Dynamic: cluster.Dynamic(), Mapper: cluster.RESTMapper(), Poll: 200 * time.Millisecond}}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	_, err = cluster.Dynamic().Resource(namespaces).Create(ctx, decode(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+e.ns+"\n"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cluster.Dynamic().Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
			Delete(context.Background(), e.ns, metav1.DeleteOptions{})
	})
	return e
}

func (e *env) run(opID string, phase app.HookType, objs ...*unstructured.Unstructured) ([]hooks.Result, error) {
	return e.runner.Run(e.ctx, hooks.Request{App: e.ns, Namespace: e.ns, OperationID: opID, Phase: phase,
		Objects: objs, CreateNamespace: true})
}

func (e *env) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	e.t.Helper()
	obj, err := e.runner.Dynamic.Resource(gvr).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(e.t, err)
	return obj
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &obj.Object))
	return obj
}

// hookJob is a Job hook; fail labels its pod so that kwok fails it.
func hookJob(t *testing.T, nameField, phase, policy string, wave int, fail bool) *unstructured.Unstructured {
	labels := "{}"
	if fail {
		labels = fmt.Sprintf("{%s: \"true\"}", devenv.FailLabel)
	}
	return decode(t, fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  %s
  annotations:
    argocd.argoproj.io/hook: %s
    argocd.argoproj.io/hook-delete-policy: %s
    argocd.argoproj.io/sync-wave: "%d"
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: %s
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`, nameField, phase, policy, wave, labels))
}

func TestRunWavesInOrderAndFindsItsOwnObjectsAgain(t *testing.T) {
	e := newEnv(t)
	first := hookJob(t, "name: schema", "PreSync", "BeforeHookCreation", -1, false)
	second := hookJob(t, "generateName: seed-", "PreSync", "BeforeHookCreation", 0, false)
	notThisPhase := hookJob(t, "name: after", "PostSync", "BeforeHookCreation", 0, false)

	results, err := e.run("1-abcdef01", app.HookTypePreSync, second, first, notThisPhase)
	require.NoError(t, err)
	require.Len(t, results, 2)
	seed := hooks.Name(second, "1-abcdef01", app.HookTypePreSync)
	assert.Equal(t, "schema", results[0].Key.Name, "wave -1 first")
	assert.Equal(t, seed, results[1].Key.Name)
	for _, r := range results {
		assert.Equal(t, hooks.Succeeded, r.Status, r.Message)
		assert.False(t, r.Delete)
	}
	schemaJob, seedJob := e.get(jobs, "schema"), e.get(jobs, seed)
	require.NotNil(t, seedJob)
	assert.False(t, seedJob.GetCreationTimestamp().Time.Before(schemaJob.GetCreationTimestamp().Time), "wave 0 after wave -1")
	assert.Nil(t, e.get(jobs, "after"), "a PostSync hook is not run in PreSync")

	// The same run again (a retried activity): the same objects, no new ones.
	again, err := e.run("1-abcdef01", app.HookTypePreSync, second, first)
	require.NoError(t, err)
	require.Len(t, again, 2)
	assert.Equal(t, schemaJob.GetUID(), e.get(jobs, "schema").GetUID())
	assert.Equal(t, seedJob.GetUID(), e.get(jobs, seed).GetUID())
	list, err := e.runner.Dynamic.Resource(jobs).Namespace(e.ns).List(e.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.Items, 2)
}

func TestBeforeHookCreationReplacesTheEarlierOperationsObject(t *testing.T) {
	e := newEnv(t)
	job := hookJob(t, "name: migrate", "PreSync", "BeforeHookCreation", 0, false)
	_, err := e.run("1-abcdef01", app.HookTypePreSync, job)
	require.NoError(t, err)
	before := e.get(jobs, "migrate")

	_, err = e.run("2-abcdef01", app.HookTypePreSync, job)
	require.NoError(t, err)
	after := e.get(jobs, "migrate")
	assert.NotEqual(t, before.GetUID(), after.GetUID(), "replaced")
	assert.Equal(t, "2-abcdef01/PreSync", after.GetAnnotations()[hooks.AnnotationOperation])
}

func TestWithoutBeforeHookCreationAnEarlierObjectIsRefused(t *testing.T) {
	e := newEnv(t)
	job := hookJob(t, "name: migrate", "PreSync", "HookFailed", 0, false)
	results, err := e.run("1-abcdef01", app.HookTypePreSync, job)
	require.NoError(t, err)
	assert.False(t, results[0].Delete, "HookFailed keeps a succeeded hook")

	_, err = e.run("2-abcdef01", app.HookTypePreSync, job)
	require.Error(t, err)
	assert.True(t, hooks.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "earlier run (1-abcdef01/PreSync) still exists")
}

func TestAnObjectThatIsNotTheAppsIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	cm := decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flag\n")
	_, err := e.runner.Dynamic.Resource(configMaps).Namespace(e.ns).Create(e.ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	hook := decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flag\n  annotations:\n    argocd.argoproj.io/hook: PreSync\n")
	_, err = e.run("1-abcdef01", app.HookTypePreSync, hook)
	require.Error(t, err)
	assert.True(t, hooks.IsInvalid(err))
	assert.Contains(t, err.Error(), "is not a hook of app")
}

func TestAFailedJobStopsTheRunWithItsPodsReason(t *testing.T) {
	e := newEnv(t)
	bad := hookJob(t, "name: migrate", "PreSync", "HookFailed", 0, true)
	later := hookJob(t, "name: later", "PreSync", "BeforeHookCreation", 1, false)
	results, err := e.run("1-abcdef01", app.HookTypePreSync, bad, later)
	require.Error(t, err)
	require.True(t, hooks.IsFailed(err), "%v", err)
	assert.Contains(t, err.Error(), "PreSync hook Job/"+e.ns+"/migrate failed: BackoffLimitExceeded")
	assert.Contains(t, err.Error(), `container "main" exited with code 1 (Error): failed on purpose`)
	require.Len(t, results, 1)
	assert.Equal(t, hooks.Failed, results[0].Status)
	assert.True(t, results[0].Delete, "HookFailed deletes a failed hook")
	assert.Nil(t, e.get(jobs, "later"), "a later wave does not start")

	require.NoError(t, e.runner.Delete(e.ctx, e.ns, "1-abcdef01", app.HookTypePreSync, []app.ResourceKey{results[0].Key}))
	deadline := time.Now().Add(30 * time.Second)
	for e.get(jobs, "migrate") != nil && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assert.Nil(t, e.get(jobs, "migrate"), "deleted by its policy")
}

func TestHookSucceededIsDeletedOnlyByItsOwnRun(t *testing.T) {
	e := newEnv(t)
	job := hookJob(t, "name: migrate", "PostSync", "HookSucceeded", 0, false)
	results, err := e.run("1-abcdef01", app.HookTypePostSync, job)
	require.NoError(t, err)
	require.True(t, results[0].Delete)
	// Another run's Delete leaves it: the object is not that run's.
	require.NoError(t, e.runner.Delete(e.ctx, e.ns, "2-abcdef01", app.HookTypePostSync, []app.ResourceKey{results[0].Key}))
	assert.NotNil(t, e.get(jobs, "migrate"))
	require.NoError(t, e.runner.Delete(e.ctx, e.ns, "1-abcdef01", app.HookTypePostSync, []app.ResourceKey{results[0].Key}))
	require.NoError(t, e.runner.Delete(e.ctx, e.ns, "1-abcdef01", app.HookTypePostSync, []app.ResourceKey{results[0].Key}), "repeatable")
}

func TestAHookEndsOnItsTimeout(t *testing.T) {
	e := newEnv(t)
	e.runner.Timeout = 2 * time.Second
	// A bare pod runs forever on kwok (only Jobs' pods complete).
	pod := decode(t, `apiVersion: v1
kind: Pod
metadata:
  name: forever
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  restartPolicy: Never
  containers: [{name: main, image: busybox:1.36}]
`)
	start := time.Now()
	_, err := e.run("1-abcdef01", app.HookTypePreSync, pod)
	require.Error(t, err)
	assert.True(t, hooks.IsFailed(err))
	assert.Contains(t, err.Error(), "did not finish within 2s")
	assert.Less(t, time.Since(start), 20*time.Second)
}
