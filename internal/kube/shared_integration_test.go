package kube_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestFailOnSharedResource: an object another Ferry app tracks is taken
// over by default, as Argo CD does with FailOnSharedResource=false (the
// other app then neither prunes nor deletes it, and shows it OutOfSync);
// with FailOnSharedResource=true the sync fails before its first write,
// naming the other app.
func TestFailOnSharedResource(t *testing.T) {
	e := newEnv(t)
	other := e.ns + "-other"
	asOther := func(r *kube.ApplyRequest) { r.App = other }
	_, err := e.apply([]*unstructured.Unstructured{configMap("shared", nil, nil)}, asOther)
	require.NoError(t, err)

	// The shared object is in wave 1: with the option, not even wave 0's
	// object is written.
	desired := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			configMap("first", nil, nil),
			configMap("shared", nil, map[string]string{"argocd.argoproj.io/sync-wave": "1"}),
		}
	}
	for _, opts := range []func(r *kube.ApplyRequest){
		func(r *kube.ApplyRequest) { r.Options.FailOnSharedResource = true },
		func(r *kube.ApplyRequest) { r.Options.FailOnSharedResource = true; r.DryRun = true },
	} {
		cs, err := e.apply(desired(), opts)
		require.Error(t, err)
		assert.True(t, kube.IsInvalid(err), "%v", err)
		assert.Contains(t, err.Error(), "ConfigMap/"+e.ns+"/shared: apply: shared resource: already tracked by Ferry application \""+other+
			"\", and FailOnSharedResource=true refuses to take it over: remove it from that application, or drop FailOnSharedResource=true to take it over")
		assert.Equal(t, map[string]string{"ConfigMap/shared": "failed"}, actions(cs))
		assert.False(t, e.exists(configMaps, "first"), "a sync refused for a shared resource writes nothing")
		assert.True(t, kube.IsTracked(other, e.get(configMaps, "shared")))
	}

	// The annotation asks for it on one object as well.
	objs := desired()
	withOptions(objs[1], "FailOnSharedResource=true")
	_, err = e.apply(objs, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FailOnSharedResource=true refuses to take it over")

	// FailOnSharedResource=false, said or not: taken over.
	for _, opts := range []string{"FailOnSharedResource=false", ""} {
		objs := desired()
		if opts != "" {
			withOptions(objs[1], opts)
		}
		cs, err := e.apply(objs, nil)
		require.NoError(t, err)
		for _, c := range cs.Entries {
			if c.Key.Name == "shared" {
				assert.Equal(t, app.ActionConfigured, c.Action)
				assert.Contains(t, c.Message, `taken over from Ferry application "`+other+`" (a shared resource; FailOnSharedResource=true refuses this)`)
			}
		}
		if opts != "" {
			// Give it back for the next round.
			_, err = e.apply([]*unstructured.Unstructured{configMap("shared", nil, nil)}, asOther)
			require.NoError(t, err)
		}
	}
	live := e.get(configMaps, "shared")
	assert.True(t, kube.IsTracked(e.ns, live), "taken over")
	assert.False(t, kube.IsTracked(other, live))

	// The other app shows it OutOfSync, naming the app that has it, and its
	// prune leaves it alone.
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: other, Namespace: e.ns, Objects: []*unstructured.Unstructured{configMap("shared", nil, nil)}})
	require.NoError(t, err)
	require.Len(t, states, 1)
	assert.Equal(t, app.SyncStatusOutOfSync, states[0].Sync)
	assert.Contains(t, states[0].Message, "tracked by Ferry application "+e.ns)
	_, err = e.apply(nil, func(r *kube.ApplyRequest) {
		r.App, r.Prune = other, true
		r.Inventory = []app.ResourceKey{{Version: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "shared"}}
	})
	require.NoError(t, err)
	assert.True(t, e.exists(configMaps, "shared"), "not pruned by the app it was taken from")
}

// TestServerSideApplyFalse: an object asking for a client-side apply is
// refused by name before anything is written, and a compare shows why;
// with Replace=true the option is moot and the object is written.
func TestServerSideApplyFalse(t *testing.T) {
	e := newEnv(t)
	objs := []*unstructured.Unstructured{configMap("fine", nil, nil), withOptions(configMap("client", nil, nil), "ServerSideApply=false")}
	cs, err := e.apply(objs, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), `ConfigMap/`+e.ns+`/client: read options: annotation argocd.argoproj.io/sync-options: sync option "ServerSideApply=false" asks for a client-side apply, which Ferry does not do (it always applies server-side): remove it, or write ServerSideApply=true`)
	assert.Equal(t, map[string]string{"ConfigMap/client": "failed"}, actions(cs))
	assert.False(t, e.exists(configMaps, "fine"), "nothing is written")

	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.Error(t, err)
	byName := map[string]kube.ResourceState{}
	for _, s := range states {
		byName[s.Key.Name] = s
	}
	assert.Equal(t, app.SyncStatusUnknown, byName["client"].Sync)
	assert.Contains(t, byName["client"].Message, `"ServerSideApply=false" asks for a client-side apply`)
	assert.Equal(t, app.SyncStatusOutOfSync, byName["fine"].Sync)

	cs, err = e.apply([]*unstructured.Unstructured{withOptions(configMap("client", nil, nil), "ServerSideApply=false,Replace=true")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["ConfigMap/client"])
	_, err = e.apply([]*unstructured.Unstructured{withOptions(configMap("client", nil, nil), "ServerSideApply=true")}, nil)
	require.NoError(t, err, "ServerSideApply=true is what Ferry does")
}

// TestCompareOptionsOfResources: IgnoreExtraneous is a resource's compare
// option; the Application's (ServerSideDiff, IncludeMutationWebhook) and
// unknown ones on a resource are refused by name, in the compare the user
// sees and before a sync writes anything.
func TestCompareOptionsOfResources(t *testing.T) {
	e := newEnv(t)
	ann := func(v string) map[string]string { return map[string]string{app.AnnotationCompareOptions: v} }
	objs := []*unstructured.Unstructured{
		configMap("plain", nil, ann("IgnoreExtraneous")),
		configMap("diff", nil, ann("ServerSideDiff=true")),
		configMap("typo", nil, ann("IgnoreExtraneus")),
	}
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.Error(t, err)
	msgs := map[string]string{}
	for _, s := range states {
		msgs[s.Key.Name] = string(s.Sync) + ": " + s.Message
	}
	assert.Equal(t, map[string]string{
		"plain": "OutOfSync: missing",
		"diff": `Unknown: read options: annotation argocd.argoproj.io/compare-options: compare option "ServerSideDiff=true" is an Application's, not a resource's: ` +
			`set it in the Application's metadata.annotations["argocd.argoproj.io/compare-options"], or remove it here`,
		"typo": `Unknown: read options: annotation argocd.argoproj.io/compare-options: compare option "IgnoreExtraneus" is unknown here: known options are IgnoreExtraneous`,
	}, msgs)

	cs, err := e.apply(objs, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "%v", err)
	assert.Equal(t, map[string]string{"ConfigMap/diff": "failed", "ConfigMap/typo": "failed"}, actions(cs))
	assert.False(t, e.exists(configMaps, "plain"), "nothing is written")

	_, err = e.apply(objs[:1], nil)
	require.NoError(t, err, "IgnoreExtraneous alone is fine")
}
