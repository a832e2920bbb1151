//go:build argocd

package argocd

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// The peer cases: Argo CD's own e2e tests (test/e2e of the release that
// runs here: hook_test.go, sync_waves_test.go) on their fixtures in
// ../shared/corpus/argocd-e2e, with the adaptations to kwok its NOTICE
// names. Each case runs on Argo CD itself and on Ferry, side by side on
// the same commit, and both must give what the upstream test expects: so
// the translation of the tests is faithful (Argo CD passes them here), and
// Ferry's outcomes are Argo CD's.
const e2eCorpus = "../../../shared/corpus/argocd-e2e"

// peerCase is one upstream test: its fixture, what it changes in the
// fixture before the app is created (upstream's PatchFile), and what it
// expects after one sync.
type peerCase struct {
	name, fixture string
	patch         func(t *testing.T, dir string)
	want          outcome
	// hookKept, when set, is whether the hook Job is still there after
	// the sync (its delete policy); upstream checks its Pod.
	hookKept *bool
}

// outcome is what the upstream tests assert of an app after a sync, read
// from its Application object as Argo CD writes it (Ferry writes the same
// shape to its objects in the control cluster).
type outcome struct {
	Phase, Sync, Health string
	// Message is the operation's, for the failure's message alone.
	Message string
	// Results is the count of operationState.syncResult.resources.
	Results int
	// Resources are "Kind/name: sync/health" of the checked entries of
	// status.resources; Hooks "Kind/name: hookType hookPhase status" of the
	// hook results.
	Resources, Hooks map[string]string
}

func (o outcome) String() string {
	return fmt.Sprintf("operation %s (%q), %s/%s, %d results, resources %v, hooks %v", o.Phase, o.Message, o.Sync, o.Health, o.Results, o.Resources, o.Hooks)
}

// matches reports whether o is want on every field want checks (each of
// its resources and hooks; the app's health when want names it).
func (o outcome) matches(want outcome) bool {
	if o.Phase != want.Phase || o.Sync != want.Sync || o.Results != want.Results || want.Health != "" && o.Health != want.Health {
		return false
	}
	for k, v := range want.Resources {
		if o.Resources[k] != v {
			return false
		}
	}
	return maps.Equal(o.Hooks, want.Hooks)
}

func outcomeOf(u *unstructured.Unstructured) outcome {
	str := func(m map[string]any, path ...string) string {
		s, _, _ := unstructured.NestedString(m, path...)
		return s
	}
	o := outcome{Phase: str(u.Object, "status", "operationState", "phase"), Message: str(u.Object, "status", "operationState", "message"),
		Sync:   str(u.Object, "status", "sync", "status"),
		Health: str(u.Object, "status", "health", "status"), Resources: map[string]string{}, Hooks: map[string]string{}}
	resources, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	for _, r := range resources {
		m, _ := r.(map[string]any)
		o.Resources[str(m, "kind")+"/"+str(m, "name")] = str(m, "status") + "/" + str(m, "health", "status")
	}
	results, _, _ := unstructured.NestedSlice(u.Object, "status", "operationState", "syncResult", "resources")
	o.Results = len(results)
	for _, r := range results {
		m, _ := r.(map[string]any)
		if hook := str(m, "hookType"); hook != "" {
			o.Hooks[str(m, "kind")+"/"+str(m, "name")] = hook + " " + str(m, "hookPhase") + " " + str(m, "status")
		}
	}
	return o
}

// hookType makes the fixture's hook a hook of phase (upstream: a patch of
// its annotations).
func hookType(phase string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		replaceIn(t, filepath.Join(dir, "hook.yaml"), "argocd.argoproj.io/hook: Sync", "argocd.argoproj.io/hook: "+phase)
	}
}

// failHook makes the hook Job's pod fail (upstream: its command `false`;
// here kwok fails a pod labelled ferry.dev/fail=true).
func failHook(t *testing.T, dir string) {
	replaceIn(t, filepath.Join(dir, "hook.yaml"), "  template:\n    spec:\n",
		"  template:\n    metadata:\n      labels:\n        "+devenv.FailLabel+": \"true\"\n    spec:\n")
}

// deletePolicy gives the hook a delete policy (upstream: a patch of its
// annotations).
func deletePolicy(policy string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		replaceIn(t, filepath.Join(dir, "hook.yaml"), "    argocd.argoproj.io/hook: Sync\n",
			"    argocd.argoproj.io/hook: Sync\n    argocd.argoproj.io/hook-delete-policy: "+policy+"\n")
	}
}

// syncFailHook adds upstream's SyncFail hook, a Job as the fixture's hook
// is (the corpus's NOTICE).
func syncFailHook(t *testing.T, dir string) {
	data, err := os.ReadFile(filepath.Join(dir, "hook.yaml"))
	require.NoError(t, err)
	hook := strings.Replace(strings.Replace(string(data), "argocd.argoproj.io/hook: Sync", "argocd.argoproj.io/hook: SyncFail", 1),
		"name: hook", "name: sync-fail-hook", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sync-fail-hook.yaml"), []byte(hook), 0o644))
}

func both(patches ...func(*testing.T, string)) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		for _, p := range patches {
			p(t, dir)
		}
	}
}

func replaceIn(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s", file)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

var peerCases = []peerCase{
	hookSucceeds("TestPreSyncHookSuccessful", "PreSync"),
	hookSucceeds("TestSyncHookSuccessful", "Sync"),
	hookSucceeds("TestPostSyncHookSuccessful", "PostSync"),
	{name: "TestPreSyncHookFailure", fixture: "hook", patch: both(hookType("PreSync"), failHook),
		// If a PreSync hook fails, the main sync does not start.
		want: outcome{Phase: "Failed", Sync: "OutOfSync", Results: 1,
			Resources: map[string]string{"Pod/pod": "OutOfSync/Missing"}, Hooks: map[string]string{"Job/hook": "PreSync Failed Synced"}}},
	{name: "TestSyncHookFailure", fixture: "hook", patch: failHook,
		// The hook failed, the pod is in sync all the same.
		want: outcome{Phase: "Failed", Sync: "Synced", Results: 2,
			Resources: map[string]string{"Pod/pod": "Synced/Healthy"}, Hooks: map[string]string{"Job/hook": "Sync Failed Synced"}}},
	{name: "TestPostSyncHookFailure", fixture: "hook", patch: both(hookType("PostSync"), failHook),
		want: outcome{Phase: "Failed", Sync: "Synced", Results: 2,
			Resources: map[string]string{"Pod/pod": "Synced/Healthy"}, Hooks: map[string]string{"Job/hook": "PostSync Failed Synced"}}},
	{name: "TestSyncFailHookPodFailure", fixture: "hook", patch: both(syncFailHook, hookType("PostSync"), failHook),
		// A failed PostSync hook fails the operation and runs the SyncFail
		// hook.
		want: outcome{Phase: "Failed", Sync: "Synced", Results: 3,
			Hooks: map[string]string{"Job/hook": "PostSync Failed Synced", "Job/sync-fail-hook": "SyncFail Succeeded Synced"}}},
	{name: "TestHookDeletePolicyHookSucceededHookExit0", fixture: "hook", patch: deletePolicy("HookSucceeded"), hookKept: ptr(false),
		want: outcome{Phase: "Succeeded", Sync: "Synced", Results: 2, Hooks: map[string]string{"Job/hook": "Sync Succeeded Synced"}}},
	{name: "TestHookDeletePolicyHookSucceededHookExit1", fixture: "hook", patch: both(deletePolicy("HookSucceeded"), failHook), hookKept: ptr(true),
		want: outcome{Phase: "Failed", Sync: "Synced", Results: 2, Hooks: map[string]string{"Job/hook": "Sync Failed Synced"}}},
	{name: "TestHookDeletePolicyHookFailedHookExit0", fixture: "hook", patch: deletePolicy("HookFailed"), hookKept: ptr(true),
		want: outcome{Phase: "Succeeded", Sync: "Synced", Results: 2, Hooks: map[string]string{"Job/hook": "Sync Succeeded Synced"}}},
	{name: "TestHookDeletePolicyHookFailedHookExit1", fixture: "hook", patch: both(deletePolicy("HookFailed"), failHook), hookKept: ptr(false),
		want: outcome{Phase: "Failed", Sync: "Synced", Results: 2, Hooks: map[string]string{"Job/hook": "Sync Failed Synced"}}},
	{name: "TestFixingDegradedApp", fixture: "sync-waves",
		// Wave 1 Degraded: wave 2 is not applied and the operation fails.
		want: outcome{Phase: "Failed", Sync: "OutOfSync", Health: "Degraded", Results: 1, Hooks: map[string]string{},
			Resources: map[string]string{"Deployment/cm-1": "Synced/Degraded", "ConfigMap/cm-2": "OutOfSync/Missing"}}},
	{name: "TestDegradedDeploymentIsSucceededAndSynced", fixture: "one-deployment",
		// Upstream: an image that cannot be pulled; here pods that fit no
		// node (kwok pulls no image). A Degraded last wave does not fail
		// the operation.
		patch: func(t *testing.T, dir string) {
			file := filepath.Join(dir, "deployment.yaml")
			replaceIn(t, file, "progressDeadlineSeconds: 10", "progressDeadlineSeconds: 1")
			replaceIn(t, file, "    spec:\n      containers:", "    spec:\n      nodeSelector:\n        ferry.dev/no-such-node: \"true\"\n      containers:")
		},
		want: outcome{Phase: "Succeeded", Sync: "Synced", Health: "Degraded", Results: 1, Hooks: map[string]string{}}},
}

// hookSucceeds is upstream's testHookSuccessful for one hook type.
func hookSucceeds(name, phase string) peerCase {
	return peerCase{name: name, fixture: "hook", patch: hookType(phase),
		want: outcome{Phase: "Succeeded", Sync: "Synced", Results: 2,
			Resources: map[string]string{"Pod/pod": "Synced/Healthy"}, Hooks: map[string]string{"Job/hook": phase + " Succeeded Synced"}}}
}

// peer is one system's side of a case: where its Applications are and
// the namespace prefix of its apps' destinations.
type peer struct {
	name   string
	apps   dynamic.ResourceInterface
	prefix string
}

// TestArgoCDsOwnE2ECases runs the peer cases on Argo CD and on Ferry.
func TestArgoCDsOwnE2ECases(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	rc, err := stack.RestConfig(stack.ControlContext)
	require.NoError(t, err)
	peers := []peer{
		{"Argo CD", argoClient(t).Resource(devenv.ArgoCDAppResource).Namespace(devenv.ArgoCDNamespace), "argo"},
		{"Ferry", dynamic.NewForConfigOrDie(rc).Resource(devenv.ArgoCDAppResource).Namespace(stack.ControlNamespace), "ferry"},
	}
	home := kubeClient(t, argoCD.Home)
	for i, c := range peerCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := e.NewRepo(t, fmt.Sprintf("peer-%02d", i))
			repo.CopyDir(filepath.Join(e2eCorpus, c.fixture), c.fixture)
			if c.patch != nil {
				c.patch(t, filepath.Join(repo.Dir, c.fixture))
			}
			sha := repo.CommitAndPush(c.name)
			for _, p := range peers {
				ns := fmt.Sprintf("%s-peer-%02d", p.prefix, i)
				// Upstream's framework creates the app's namespace first.
				_, err := home.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
				require.NoError(t, err)
				_, err = p.apps.Create(context.Background(), peerApp(t, ns, repo.URL, c.fixture, sha), metav1.CreateOptions{})
				require.NoError(t, err, p.name)
				// The other tests of the package import Argo CD's apps:
				// these go (without a finalizer: their resources stay).
				t.Cleanup(func() {
					if err := p.apps.Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						t.Errorf("delete %s's Application %s: %v", p.name, ns, err)
					}
				})
			}
			for _, p := range peers {
				name := fmt.Sprintf("%s-peer-%02d", p.prefix, i)
				e2etest.Eventually(t, 4*time.Minute, fmt.Sprintf("%s: %s as upstream expects: %s", p.name, c.name, c.want), func() (bool, string) {
					u, err := p.apps.Get(context.Background(), name, metav1.GetOptions{})
					if err != nil {
						return false, err.Error()
					}
					o := outcomeOf(u)
					return o.matches(c.want), o.String()
				})
				if c.hookKept != nil {
					e2etest.Eventually(t, time.Minute, fmt.Sprintf("%s: %s: the hook Job kept: %t", p.name, c.name, *c.hookKept), func() (bool, string) {
						_, err := home.BatchV1().Jobs(name).Get(context.Background(), "hook", metav1.GetOptions{})
						kept := err == nil
						return kept == *c.hookKept && (kept || apierrors.IsNotFound(err)), fmt.Sprintf("get Job hook: %v", err)
					})
				}
			}
		})
	}
}

// peerApp is the Application of a case, as upstream's CreateApp makes it
// (manual sync, the fixture's directory, the app's own namespace of the
// cluster Argo CD runs in), with the operation `argocd app sync` writes.
func peerApp(t *testing.T, name, repoURL, path, sha string) *unstructured.Unstructured {
	doc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %[1]s}
spec:
  project: default
  source: {repoURL: %[2]q, path: %[3]s, targetRevision: main}
  destination: {name: %[4]s, namespace: %[1]s}
operation:
  initiatedBy: {username: e2e}
  sync: {revision: %[5]s}
`, name, repoURL, path, argoCD.Home, sha)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

func ptr[T any](v T) *T { return &v }
