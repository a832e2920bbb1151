package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/manifests"
)

// The unit tests of the region activities' Compare and Sync over a
// kube.Cluster on a fake API (fakecluster_test.go): what a user sees of
// an app in one region, with no API server.

const testRegion = "us-east-1"

// regionTest runs the region activities of one app, "shop", whose
// objects go to namespace shop.
type regionTest struct {
	t      *testing.T
	api    *fakeAPI
	region *Region
	env    *testsuite.TestActivityEnvironment
	cache  *manifests.Memory
	// projects, when set, tells the region the app's project.
	projects ProjectSource
	// inventory: the keys the last sync left as the app's.
	inventory []app.ResourceKey
}

func newRegionTest(t *testing.T) *regionTest {
	rt := &regionTest{t: t, api: newFakeAPI(t, kobj("v1 Namespace shop")), cache: manifests.NewMemory(1<<20, time.Hour)}
	rt.restart()
	return rt
}

// restart is a region worker that starts afresh, with nothing in memory
// but the manifests handed over, over the same API server.
func (rt *regionTest) restart() {
	rt.region = &Region{Name: testRegion, Cluster: rt.api.cluster(rt.t), DisableLiveCache: true, HealthPoll: 5 * time.Millisecond,
		HandOver: &HandOver{Cache: rt.cache}, Projects: rt.projects}
	var s testsuite.WorkflowTestSuite
	rt.env = s.NewTestActivityEnvironment()
	rt.env.RegisterActivityWithOptions(rt.region.Compare, activity.RegisterOptions{Name: contract.ActivityCompare})
	rt.env.RegisterActivityWithOptions(rt.region.Sync, activity.RegisterOptions{Name: contract.ActivitySync})
	rt.env.RegisterActivityWithOptions(rt.region.SyncWithHooks, activity.RegisterOptions{Name: contract.ActivitySyncWithHooks})
}

// target is the app's target of objs, handed over to the region worker
// as the control side would.
func (rt *regionTest) target(objs ...*unstructured.Unstructured) contract.Target {
	payload, digest, err := manifests.Encode(objs)
	require.NoError(rt.t, err)
	rt.cache.Put(context.Background(), "handover/"+digest, payload)
	return contract.Target{App: "shop", SHA: "0123456789abcdef", Digest: digest}
}

func (rt *regionTest) compare(in contract.CompareInput, objs ...*unstructured.Unstructured) (contract.CompareResult, error) {
	in.Target, in.Region, in.Namespace, in.Inventory = rt.target(objs...), testRegion, "shop", rt.inventory
	var out contract.CompareResult
	v, err := rt.env.ExecuteActivity(contract.ActivityCompare, in)
	if err == nil {
		require.NoError(rt.t, v.Get(&out))
	}
	return out, err
}

// sync runs a Sync (with hooks when withHooks) and remembers the keys it
// leaves as the app's, as the workflow does for the next one.
func (rt *regionTest) sync(in contract.SyncInput, withHooks bool, objs ...*unstructured.Unstructured) (contract.SyncResult, error) {
	in.Target, in.Region, in.Namespace, in.Inventory, in.OperationID = rt.target(objs...), testRegion, "shop", rt.inventory, "op-1"
	name := contract.ActivitySync
	if withHooks {
		name = contract.ActivitySyncWithHooks
	}
	var out contract.SyncResult
	v, err := rt.env.ExecuteActivity(name, in)
	if err == nil {
		require.NoError(rt.t, v.Get(&out))
		rt.inventory = nil
		for _, r := range out.Resources {
			if r.Health != app.HealthMissing {
				rt.inventory = append(rt.inventory, r.ResourceKey)
			}
		}
	}
	return out, err
}

// fakeProjects is the app "shop" of project p, as the app's and the
// project's workflows tell a region worker.
type fakeProjects struct{ p *app.AppProject }

func (f fakeProjects) AppProject(_ context.Context, name string) (*app.Application, *app.AppProject, error) {
	a := &app.Application{}
	a.Metadata.Name = name
	a.Spec.Project = f.p.Metadata.Name
	return a, f.p, nil
}

func (f fakeProjects) Project(context.Context, string) (*app.AppProject, error) { return f.p, nil }

// keyOf is the key of a ConfigMap of the app.
func keyOf(name string) app.ResourceKey {
	return app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: name}
}

// statusOf is the status the result gives the app's ConfigMap name.
func statusOf(t *testing.T, resources []app.ResourceStatus, name string) app.ResourceStatus {
	t.Helper()
	for _, r := range resources {
		if r.ResourceKey == keyOf(name) {
			return r
		}
	}
	t.Fatalf("no status of ConfigMap shop/%s in %+v", name, resources)
	return app.ResourceStatus{}
}

// actions are the results' actions by "Kind/name".
func actions(results []app.ResourceResult) map[string]string {
	out := map[string]string{}
	for _, r := range results {
		out[r.Kind+"/"+r.Name] = string(r.Action) + ": " + r.Message
	}
	return out
}

// TestNothingToDo: a region that runs what Git says compares Synced and
// Healthy, also for a worker that has just started (its prediction is a
// dry run, not a memory of its own writes), and a sync changes nothing.
func TestNothingToDo(t *testing.T) {
	rt := newRegionTest(t)
	a, b := kobj("v1 ConfigMap shop/a", "k=1"), kobj("v1 ConfigMap shop/b", "k=2")
	_, err := rt.sync(contract.SyncInput{}, false, a, b)
	require.NoError(t, err)
	rt.restart()
	rt.api.written()

	cmp, err := rt.compare(contract.CompareInput{}, a, b)
	require.NoError(t, err)
	require.Len(t, cmp.Resources, 2)
	for _, r := range cmp.Resources {
		assert.Equal(t, app.SyncStatusSynced, r.Status, r.Name)
		assert.Equal(t, app.HealthHealthy, r.Health, r.Name)
		assert.Empty(t, r.Message, r.Name)
		assert.False(t, r.RequiresPruning, r.Name)
	}
	assert.Empty(t, rt.api.written(), "a compare writes nothing")

	out, err := rt.sync(contract.SyncInput{}, false, a, b)
	require.NoError(t, err)
	assert.Nil(t, out.Failure)
	assert.Equal(t, map[string]string{"ConfigMap/a": "unchanged: ", "ConfigMap/b": "unchanged: "}, actions(out.Results))
}

// TestChangedField: a field Git changes shows OutOfSync with its path,
// and a sync applies it.
func TestChangedField(t *testing.T) {
	rt := newRegionTest(t)
	_, err := rt.sync(contract.SyncInput{}, false, kobj("v1 ConfigMap shop/a", "k=1"))
	require.NoError(t, err)
	changed := kobj("v1 ConfigMap shop/a", "k=2")

	cmp, err := rt.compare(contract.CompareInput{}, changed)
	require.NoError(t, err)
	st := statusOf(t, cmp.Resources, "a")
	assert.Equal(t, app.SyncStatusOutOfSync, st.Status)
	assert.Equal(t, "differs at data.k", st.Message)
	assert.Equal(t, "1", rt.api.live(t, "ConfigMap", "shop", "a").Object["data"].(map[string]any)["k"], "the compare's dry run stored nothing")

	out, err := rt.sync(contract.SyncInput{}, false, changed)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/a": "configured: changed data.k"}, actions(out.Results))
	assert.Equal(t, app.SyncStatusSynced, statusOf(t, out.Resources, "a").Status)
	assert.Equal(t, "2", rt.api.live(t, "ConfigMap", "shop", "a").Object["data"].(map[string]any)["k"])
}

// TestIgnoredDifference: a field someone else changed in the region shows
// OutOfSync, unless the app's ignoreDifferences ignore it.
func TestIgnoredDifference(t *testing.T) {
	rt := newRegionTest(t)
	a := kobj("v1 ConfigMap shop/a", "k=1", "other=1")
	_, err := rt.sync(contract.SyncInput{}, false, a)
	require.NoError(t, err)
	edited := rt.api.live(t, "ConfigMap", "shop", "a")
	edited.Object["data"].(map[string]any)["k"] = "edited"
	rt.api.put(t, edited)

	cmp, err := rt.compare(contract.CompareInput{}, a)
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusOutOfSync, statusOf(t, cmp.Resources, "a").Status, "the edit shows")
	assert.Equal(t, "differs at data.k", statusOf(t, cmp.Resources, "a").Message)

	ignore := []app.IgnoreDifference{{Kind: "ConfigMap", JSONPointers: []string{"/data/k"}}}
	cmp, err = rt.compare(contract.CompareInput{IgnoreDifferences: ignore}, a)
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusSynced, statusOf(t, cmp.Resources, "a").Status, "ignored")
	assert.Empty(t, statusOf(t, cmp.Resources, "a").Message)
}
