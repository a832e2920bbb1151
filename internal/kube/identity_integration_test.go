package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

var serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}

// serviceAccountMayWrite makes ServiceAccount name in e.ns, with a Role
// that allows every verb on the resources given (core group), and returns
// its user.
func (e *env) serviceAccountMayWrite(name string, resources ...string) string {
	e.t.Helper()
	sa := decode(e.t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: "+name+"}")
	_, err := e.dyn.Resource(serviceAccounts).Namespace(e.ns).Create(e.ctx, sa, metav1.CreateOptions{})
	require.NoError(e.t, err)
	role := decode(e.t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: "+name+"}\nrules:\n"+
		"- {apiGroups: [''], resources: ['"+strings.Join(resources, "','")+"'], verbs: ['*']}")
	_, err = e.dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}).
		Namespace(e.ns).Create(e.ctx, role, metav1.CreateOptions{})
	require.NoError(e.t, err)
	binding := decode(e.t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: "+name+"}\n"+
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "+name+"}\n"+
		"subjects: [{kind: ServiceAccount, name: "+name+", namespace: "+e.ns+"}]")
	_, err = e.dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}).
		Namespace(e.ns).Create(e.ctx, binding, metav1.CreateOptions{})
	require.NoError(e.t, err)
	return app.ServiceAccountUser(e.ns, name)
}

// TestImpersonatedWrites: a view made by As writes as the ServiceAccount,
// so its RBAC decides; the worker's own identity (an admin here) still
// reads.
func TestImpersonatedWrites(t *testing.T) {
	e := newEnv(t)
	user := e.serviceAccountMayWrite("deployer", "configmaps")
	view := e.cluster.As(user)

	cm := configMap("allowed", nil, nil)
	cs, err := view.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: []*unstructured.Unstructured{cm}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/allowed": "created"}, actions(cs))

	denied := decode(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: denied}")
	cs, err = view.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: []*unstructured.Unstructured{cm, denied}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `User "`+user+`" cannot patch resource "serviceaccounts"`, "the API server names the impersonated user")
	assert.False(t, e.exists(serviceAccounts, "denied"))
	assert.Equal(t, "failed", actions(cs)["ServiceAccount/denied"])

	// The worker's own identity may write ServiceAccounts: only the view is held back.
	_, err = e.cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: []*unstructured.Unstructured{cm, denied}})
	require.NoError(t, err)

	// Prune and delete go through the view too: the ServiceAccount it may not
	// delete stays, the ConfigMap goes.
	_, err = view.DeleteAll(e.ctx, e.ns, app.PropagationBackground)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `User "`+user+`" cannot delete resource "serviceaccounts"`)
	assert.True(t, e.exists(serviceAccounts, "denied"))
	e.eventually("the ConfigMap deleted", func() bool { return !e.exists(configMaps, "allowed") })
}

// TestImpersonationResolvedOnWrite: AsResolved asks who to write as only
// when a write is due, and its error fails the write.
func TestImpersonationResolvedOnWrite(t *testing.T) {
	e := newEnv(t)
	objs := []*unstructured.Unstructured{configMap("cm", nil, nil)}
	_, err := e.apply(objs, nil)
	require.NoError(t, err)
	e.compare(objs, nil) // the prediction is cached

	asked := 0
	refuse := errors.New("no service account for this destination")
	view := e.cluster.AsResolved(func(context.Context) (string, error) { asked++; return "", refuse })
	states, err := view.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusSynced, states[0].Sync)
	assert.Zero(t, asked, "a compare that sends nothing asks nothing")
	assert.NoError(t, view.WriteUserFailed(), "nothing asked, nothing failed")

	changed := []*unstructured.Unstructured{configMap("cm", map[string]string{"new": "label"}, nil)}
	_, err = view.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: changed})
	require.ErrorIs(t, err, refuse)
	assert.Equal(t, 1, asked)
	assert.ErrorIs(t, view.WriteUserFailed(), refuse, "the view says why its writes failed")
	live, err := e.dyn.Resource(configMaps).Namespace(e.ns).Get(e.ctx, "cm", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, live.GetLabels()["new"])
}
