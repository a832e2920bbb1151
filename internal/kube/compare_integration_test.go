package kube_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestNoFalseDrift: manifests that leave everything to the API server's
// defaults, with int-or-string ports, quantities in another notation,
// empty maps and a Secret with stringData, are Synced right after a sync,
// and still once the controllers have worked on them.
func TestNoFalseDrift(t *testing.T) {
	e := newEnv(t)
	objs := fixture(t, "defaults")
	_, err := e.apply(objs, nil)
	require.NoError(t, err)
	check := func(when string) {
		for _, s := range e.compare(objs, nil) {
			assert.Equal(t, app.SyncStatusSynced, s.Sync, "%s: %s/%s: %s", when, s.Key.Kind, s.Key.Name, s.Message)
		}
	}
	check("right after the sync")
	e.eventually("the workloads to be healthy", func() bool {
		for _, s := range e.compare(objs, nil) {
			// No ingress controller nor metrics here: the Ingress stays
			// Progressing and the autoscaler Degraded, as Argo CD shows them.
			if s.Key.Kind == "Ingress" || s.Key.Kind == "HorizontalPodAutoscaler" {
				continue
			}
			if s.Health != app.HealthHealthy {
				return false
			}
		}
		return true
	})
	check("once healthy")
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	for _, c := range cs.Entries {
		assert.Equal(t, kube.ActionUnchanged, c.Action, "%s/%s: %s", c.Key.Kind, c.Key.Name, c.Message)
	}
}

// TestCompareAfterSyncSendsNoDryRun: right after a sync, the objects the
// sync wrote compare Synced without a dry run each (the write's answer is
// what a dry run of it would return), and a cluster that wrote nothing,
// asking the API server with a dry run per object, agrees.
func TestCompareAfterSyncSendsNoDryRun(t *testing.T) {
	e := newEnv(t)
	objs := []*unstructured.Unstructured{configMap("one", nil, nil), configMap("two", map[string]string{"tier": "web"}, nil)}
	for _, o := range guestbook(t) {
		if o.GetKind() == "Service" {
			objs = append(objs, o)
		}
	}
	syncer, dryRuns := e.clusterCounting(kube.DefaultOptions(), isDryRun)
	req := kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs}
	_, err := syncer.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	require.Zero(t, dryRuns.Load(), "a sync of new objects sends no dry run")

	states, err := syncer.Compare(e.ctx, req)
	require.NoError(t, err)
	want := map[string]app.SyncStatusCode{"ConfigMap/one": "Synced", "ConfigMap/two": "Synced", "Service/guestbook-ui": "Synced"}
	assert.Equal(t, want, syncs(states))
	assert.Zero(t, dryRuns.Load(), "the compare after the sync")

	noResults := kube.DefaultOptions()
	noResults.CompareCacheTTL = 0
	other, otherDryRuns := e.clusterCounting(noResults, isDryRun)
	states, err = other.Compare(e.ctx, req)
	require.NoError(t, err)
	assert.Equal(t, want, syncs(states))
	assert.Equal(t, int64(len(objs)), otherDryRuns.Load(), "one dry run per object without the sync's answers")

	// Changed by someone else, an object is dry-run again.
	_, err = e.dyn.Resource(configMaps).Namespace(e.ns).Patch(e.ctx, "one", types.MergePatchType,
		[]byte(`{"data":{"greeting":"bye"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	states, err = syncer.Compare(e.ctx, req)
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusOutOfSync, syncs(states)["ConfigMap/one"])
	assert.Equal(t, int64(1), dryRuns.Load())
}

// TestAStatusReportSendsNoDryRun: a live object whose status alone
// changed (a controller's report) keeps its compare result without a dry
// run; a change to anything else is dry-run again.
func TestAStatusReportSendsNoDryRun(t *testing.T) {
	e := newEnv(t)
	var objs []*unstructured.Unstructured
	for _, o := range guestbook(t) {
		if o.GetKind() == "Service" {
			objs = append(objs, o)
		}
	}
	syncer, dryRuns := e.clusterCounting(kube.DefaultOptions(), isDryRun)
	_, err := syncer.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	req := kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs}

	svc := e.dyn.Resource(services).Namespace(e.ns)
	live, err := svc.Get(e.ctx, "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err)
	cond := map[string]any{"type": "Reported", "status": "True", "reason": "Test", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	require.NoError(t, unstructured.SetNestedSlice(live.Object, []any{cond}, "status", "conditions"))
	reported, err := svc.UpdateStatus(e.ctx, live, metav1.UpdateOptions{FieldManager: "a-controller"})
	require.NoError(t, err)
	require.NotEqual(t, live.GetResourceVersion(), reported.GetResourceVersion())
	states, err := syncer.Compare(e.ctx, req)
	require.NoError(t, err)
	assert.Equal(t, map[string]app.SyncStatusCode{"Service/guestbook-ui": "Synced"}, syncs(states))
	assert.Zero(t, dryRuns.Load(), "a status report is not dry-run")

	_, err = svc.Patch(e.ctx, "guestbook-ui", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"web"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	states, err = syncer.Compare(e.ctx, req)
	require.NoError(t, err)
	assert.Equal(t, map[string]app.SyncStatusCode{"Service/guestbook-ui": "Synced"}, syncs(states))
	assert.Equal(t, int64(1), dryRuns.Load(), "a label someone added is dry-run")
}

// TestIgnoreDifferences: a hand-scaled Deployment is OutOfSync unless the
// app ignores spec.replicas by JSON pointer, jq path or field manager.
func TestIgnoreDifferences(t *testing.T) {
	e := newEnv(t)
	objs := guestbook(t)
	_, err := e.apply(objs, nil)
	require.NoError(t, err)
	_, err = e.dyn.Resource(deployments).Namespace(e.ns).Patch(e.ctx, "guestbook-ui", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		ignore []app.IgnoreDifference
		want   app.SyncStatusCode
	}{
		{name: "none", want: app.SyncStatusOutOfSync},
		{name: "jsonPointers", ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}, want: app.SyncStatusSynced},
		{name: "jqPathExpressions", ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{".spec.replicas"}}}, want: app.SyncStatusSynced},
		{name: "managedFieldsManagers", ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kubectl-edit"}}}, want: app.SyncStatusSynced},
		{name: "another manager", ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"hpa"}}}, want: app.SyncStatusOutOfSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := diff.Compile(tc.ignore)
			require.NoError(t, err)
			states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs, Ignore: rules})
			require.NoError(t, err)
			assert.Equal(t, tc.want, syncs(states)["Deployment/guestbook-ui"])
		})
	}
}

// TestDiffMasksSecrets: the diff shown for a Secret names the keys that
// changed and masks every value.
func TestDiffMasksSecrets(t *testing.T) {
	e := newEnv(t)
	secret := func(password string) *unstructured.Unstructured {
		return decode(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {user: admin, password: "+password+"}\n")
	}
	_, err := e.apply([]*unstructured.Unstructured{secret("hunter2")}, nil)
	require.NoError(t, err)
	req := kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: []*unstructured.Unstructured{secret("swordfish")}}
	states, err := e.cluster.Compare(e.ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "differs at data.password", states[0].Message)

	diffs, err := e.cluster.Diff(e.ctx, req, 0)
	require.NoError(t, err)
	require.Len(t, diffs, 1)
	text := diffs[0].Unified
	for _, secret := range []string{"hunter2", "swordfish", "aHVudGVyMg", "c3dvcmRmaXNo", "YWRtaW4"} {
		assert.NotContains(t, text, secret)
	}
	assert.Contains(t, text, "-  password: ++++++++\n")
	assert.Contains(t, text, "+  password: +++++++++\n")
	assert.Contains(t, text, "   user: ++++++++\n")
	assert.True(t, strings.HasPrefix(text, "--- live/Secret/"+e.ns+"/creds\n+++ desired/Secret/"+e.ns+"/creds\n"), text)

	none, err := e.cluster.Diff(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: []*unstructured.Unstructured{secret("hunter2")}}, 0)
	require.NoError(t, err)
	assert.Empty(t, none, "no diff once in sync")
}

// TestIgnoreExtraneous: a tracked object no longer desired shows OutOfSync
// whatever its options, as Argo CD's CompareAppState shows it; it counts
// toward the app's sync status unless its compare options say
// IgnoreExtraneous. Prune=false and Prune=confirm decide what a sync does
// with it, never whether it counts (Argo CD's "Sync Options": "The app will
// be out of sync if Argo CD expects a resource to be pruned"). A desired
// object with IgnoreExtraneous is compared as any other.
func TestIgnoreExtraneous(t *testing.T) {
	e := newEnv(t)
	ignore := map[string]string{app.AnnotationCompareOptions: "IgnoreExtraneous"}
	cases := []struct {
		name          string
		compare, sync string
		wantMessage   string
		counts        bool // toward the app's sync status
	}{
		{name: "plain", wantMessage: "a sync with prune deletes it", counts: true},
		{name: "ignored", compare: "IgnoreExtraneous", wantMessage: "not counted in the app's sync status (IgnoreExtraneous)"},
		{name: "kept", sync: "Prune=false", wantMessage: "kept by Prune=false", counts: true},
		{name: "kept-ignored", compare: "IgnoreExtraneous", sync: "Prune=false", wantMessage: "kept by Prune=false; not counted"},
		{name: "confirm", sync: "Prune=confirm", wantMessage: "once confirmed (Prune=confirm", counts: true},
		{name: "confirm-ignored", compare: "IgnoreExtraneous", sync: "Prune=confirm", wantMessage: "once confirmed (Prune=confirm: ferry app confirm); not counted"},
	}
	main := configMap("main", nil, ignore)
	objs := []*unstructured.Unstructured{main}
	for _, c := range cases {
		ann := map[string]string{}
		if c.compare != "" {
			ann[app.AnnotationCompareOptions] = c.compare
		}
		if c.sync != "" {
			ann[app.AnnotationSyncOptions] = c.sync
		}
		objs = append(objs, configMap(c.name, nil, ann))
	}
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	desired := []*unstructured.Unstructured{configMap("main", nil, ignore)}
	states := e.compare(desired, keys(cs))
	byName := map[string]kube.ResourceState{}
	for _, s := range states {
		byName[s.Key.Name] = s
	}
	require.Equal(t, app.SyncStatusSynced, byName["main"].Sync, "a desired object in sync")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, ok := byName[c.name]
			require.True(t, ok, "the extraneous ConfigMap is listed: %v", states)
			assert.Equal(t, app.SyncStatusOutOfSync, st.Sync, "an extraneous resource shows OutOfSync")
			assert.True(t, st.RequiresPruning)
			assert.Contains(t, st.Message, c.wantMessage)
			// The app is the desired ConfigMap (Synced) and this one.
			rows := []app.ResourceStatus{{ResourceKey: byName["main"].Key, Status: byName["main"].Sync},
				{ResourceKey: st.Key, Status: st.Sync, CountsAs: st.CountsAs}}
			want := app.SyncStatusSynced
			if c.counts {
				want = app.SyncStatusOutOfSync
			}
			assert.Equal(t, want, app.RollUpSync(rows), "the app's sync status")
		})
	}

	// IgnoreExtraneous on a desired object that differs changes nothing.
	changed := configMap("main", nil, ignore)
	_ = unstructured.SetNestedStringMap(changed.Object, map[string]string{"greeting": "bonjour"}, "data")
	for _, s := range e.compare([]*unstructured.Unstructured{changed}, keys(cs)) {
		if s.Key.Name == "main" {
			assert.Equal(t, app.SyncStatusOutOfSync, s.Sync)
			assert.Empty(t, s.CountsAs, "a desired object counts as it shows")
		}
	}
}

// TestCompareProhibited: what the app's project does not permit is not
// compared: a desired object shows Unknown and Missing, counted OutOfSync
// for the app (Argo CD's controller hides its live object); a tracked one
// no longer desired shows the same way, to be pruned. The rest compares.
func TestCompareProhibited(t *testing.T) {
	e := newEnv(t)
	cs, err := e.apply([]*unstructured.Unstructured{configMap("main", nil, nil), configMap("blocked", nil, nil), configMap("extra", nil, nil)}, nil)
	require.NoError(t, err)
	prohibits := func(o app.PlacedObject) string {
		assert.True(t, o.Namespaced, "a ConfigMap is namespaced") // called from the compare's goroutines
		if o.Key.Name == "blocked" || o.Key.Name == "extra" {
			return "namespaced kind ConfigMap is not allowed (namespaceResourceBlacklist)"
		}
		return ""
	}
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Inventory: keys(cs), Prohibits: prohibits,
		Objects: []*unstructured.Unstructured{configMap("main", nil, nil), configMap("blocked", nil, nil)}})
	require.NoError(t, err)
	byName := map[string]kube.ResourceState{}
	for _, s := range states {
		byName[s.Key.Name] = s
	}
	require.Len(t, byName, 3, "%+v", states)
	assert.Equal(t, app.SyncStatusSynced, byName["main"].Sync)
	for _, name := range []string{"blocked", "extra"} {
		st := byName[name]
		assert.Equal(t, app.SyncStatusUnknown, st.Sync, name)
		assert.Equal(t, app.HealthMissing, st.Health, name)
		assert.Equal(t, app.SyncStatusOutOfSync, st.CountsAs, name)
		assert.Contains(t, st.Message, "not permitted by the app's project: namespaced kind ConfigMap is not allowed (namespaceResourceBlacklist)")
		assert.Equal(t, name == "extra", st.RequiresPruning, name)
	}
}
