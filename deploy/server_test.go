package deploy

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/accounts"
	"github.com/ferry-gitops/ferry/internal/appobjects"
	"github.com/ferry-gitops/ferry/internal/tokens"
)

// TestFerryServerComponent: components/ferry-server renders ferry-server
// from the overlay's image, as its own ServiceAccount; installed for real
// in the control cluster, that ServiceAccount makes the server's calls
// with the server's own code where it can (its first start's Secrets, the
// informers of the ConfigMaps and of argocd-secret, a password and an API
// key written), gets, patches and deletes an Application, records a
// token in an AppProject and creates an Event, and nothing more.
func TestFerryServerComponent(t *testing.T) {
	v := variant{overlay: "overlays/example/control", argocd: true, server: true}
	r := rendered{t: t, objs: render(t, v)}
	d := r.find("Deployment", "ferry-server")
	require.NotNil(t, d, "the component renders the Deployment ferry-server")
	c := d.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	assert.Equal(t, "ferry-server", c["serviceAccountName"])
	container := c["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{"ferry-server"}, container["command"])
	assert.Contains(t, container["image"], "registry.example.com/ferry/ferry-worker@sha256:", "the overlay's image, pinned")
	assert.Contains(t, container["args"], "--regions=$(FERRY_REGIONS)", "the workers' regions")
	assert.Contains(t, container["env"], map[string]any{"name": "FERRY_SERVER_REGIONS_KUBECONFIG", "value": "/etc/ferry-server/regions/kubeconfig"})
	assert.Contains(t, c["volumes"], map[string]any{"name": "regions", "secret": map[string]any{"secretName": "ferry-server-regions", "optional": true}},
		"the regions' kubeconfig, optional")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := connect(t, controlConfig(t))
	createArgoCDNamespace(t, ctx, admin)
	for _, kind := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding"} {
		for _, o := range r.objs {
			if o.GetKind() == kind {
				_, err := admin.apply(ctx, o, false)
				require.NoError(t, err, "apply %s %s", kind, o.GetName())
			}
		}
	}
	saConfig := inClusterConfig(t, ctx, admin, "ferry-server")
	sa := kubernetes.NewForConfigOrDie(saConfig)
	saDyn := dynamic.NewForConfigOrDie(saConfig)

	store := &accounts.Store{Client: sa, Namespace: argocdNamespace}
	_, err := store.Bootstrap(ctx, tokens.NewKey)
	require.NoError(t, err, "the first start's Secrets")
	_, err = store.Bootstrap(ctx, tokens.NewKey)
	require.NoError(t, err, "a second start")
	cfg, err := accounts.WatchConfig(ctx, sa, argocdNamespace, func() {})
	require.NoError(t, err, "the informers of the ConfigMaps and argocd-secret")
	assert.NotEmpty(t, cfg.Secret()["admin.password"])
	hash, err := accounts.Hash("a-new-password")
	require.NoError(t, err)
	require.NoError(t, store.SetPassword(ctx, accounts.Admin, hash))
	require.NoError(t, store.AddToken(ctx, "ci", accounts.Token{ID: "k1", IssuedAt: 1}))

	adminApps := admin.dyn.Resource(appobjects.Applications).Namespace(argocdNamespace)
	_, err = adminApps.Create(ctx, application(t, argocdNamespace, "server-check"), metav1.CreateOptions{})
	require.NoError(t, err)
	apps := saDyn.Resource(appobjects.Applications).Namespace(argocdNamespace)
	_, err = apps.Get(ctx, "server-check", metav1.GetOptions{})
	require.NoError(t, err)
	_, err = apps.Patch(ctx, "server-check", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(t, err, "the finalizer a delete sets or clears")
	require.NoError(t, apps.Delete(ctx, "server-check", metav1.DeleteOptions{}))

	proj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "server-check", "namespace": argocdNamespace},
		"spec":     map[string]any{"roles": []any{map[string]any{"name": "ci"}}}}}
	_, err = admin.dyn.Resource(appobjects.AppProjects).Namespace(argocdNamespace).Create(ctx, proj, metav1.CreateOptions{})
	require.NoError(t, err)
	projects := saDyn.Resource(appobjects.AppProjects).Namespace(argocdNamespace)
	got, err := projects.Get(ctx, "server-check", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(got.Object, []any{map[string]any{"name": "ci", "jwtTokens": []any{map[string]any{"iat": int64(1), "id": "t1"}}}}, "spec", "roles"))
	_, err = projects.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err, "a project role token's id recorded")
	_, err = sa.CoreV1().Events(argocdNamespace).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "server-check."},
		InvolvedObject: corev1.ObjectReference{Kind: "Application", Namespace: argocdNamespace, Name: "server-check"}, Reason: "OperationStarted"}, metav1.CreateOptions{})
	require.NoError(t, err)

	// Nothing more.
	_, err = kubernetes.NewForConfigOrDie(admin.cfg).CoreV1().Secrets(argocdNamespace).Create(ctx,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "repo-creds"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	forbidden := map[string]error{}
	_, forbidden["update another Secret"] = sa.CoreV1().Secrets(argocdNamespace).Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "repo-creds"}}, metav1.UpdateOptions{})
	_, forbidden["list every Secret"] = sa.CoreV1().Secrets(argocdNamespace).List(ctx, metav1.ListOptions{})
	forbidden["delete a Secret"] = sa.CoreV1().Secrets(argocdNamespace).Delete(ctx, "repo-creds", metav1.DeleteOptions{})
	_, forbidden["Secrets of another namespace"] = sa.CoreV1().Secrets("default").Get(ctx, "any", metav1.GetOptions{})
	_, forbidden["write a ConfigMap"] = sa.CoreV1().ConfigMaps(argocdNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written"}}, metav1.CreateOptions{})
	_, forbidden["list Applications"] = apps.List(ctx, metav1.ListOptions{})
	_, forbidden["create an Application"] = apps.Create(ctx, application(t, argocdNamespace, "made-by-server"), metav1.CreateOptions{})
	forbidden["delete an AppProject"] = projects.Delete(ctx, "server-check", metav1.DeleteOptions{})
	for what, err := range forbidden {
		assert.True(t, apierrors.IsForbidden(err), "%s: %v", what, err)
	}
}
