package deploy

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// asRegionWorker installs the variant's ServiceAccount and RBAC for real,
// then returns clients acting as that ServiceAccount with the config that
// client-go's in-cluster config (ferry-worker's without a kubeconfig) builds
// from the pod's token and CA files, pointed at the local API server instead
// of kubernetes.default.svc.
func asRegionWorker(t *testing.T, ctx context.Context, v variant) (admin, sa *cluster, saClients kubernetes.Interface) {
	t.Helper()
	admin = connect(t, adminConfig(t))
	r := rendered{t: t, objs: render(t, v)}
	createNamespace(t, ctx, admin, tenantNamespace)
	for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding"} {
		for _, o := range r.objs {
			if o.GetKind() == kind {
				_, err := admin.apply(ctx, o, false)
				require.NoError(t, err, "apply %s %s", kind, o.GetName())
			}
		}
	}

	d := convert[appsv1.Deployment](t, r.find("Deployment", "ferry-region"))
	cfg := inClusterConfig(t, ctx, admin, d.Spec.Template.Spec.ServiceAccountName)
	sa = connect(t, cfg)
	saClients = kubernetes.NewForConfigOrDie(cfg)

	// It is the ServiceAccount, not the admin.
	who, err := saClients.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "system:serviceaccount:ferry-system:ferry-region", who.Status.UserInfo.Username)

	// Discovery.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	_, err = dc.ServerVersion()
	require.NoError(t, err)
	_, resources, err := dc.ServerGroupsAndResources()
	require.NoError(t, err)
	assert.NotEmpty(t, resources)
	_, err = dc.OpenAPIV3().Paths()
	require.NoError(t, err)

	// It may not impersonate users, only ServiceAccounts: multi-tenant,
	// only those of the tenant namespaces, never kube-system's.
	for _, c := range []struct {
		res, namespace string
		want           bool
	}{
		{"users", "", false}, {"groups", "", false},
		{"serviceaccounts", "team-a", true},
		{"serviceaccounts", "kube-system", v.singleTenant},
		{"serviceaccounts", "", v.singleTenant},
	} {
		review, err := saClients.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "impersonate", Resource: c.res, Namespace: c.namespace}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, c.want, review.Status.Allowed, "the region worker may impersonate %s in namespace %q: %v", c.res, c.namespace, review.Status.Allowed)
	}
	return admin, sa, saClients
}

// TestRegionWorkerIdentity: the multi-tenant region worker (deploy/region)
// reads and watches everything, writes nothing as itself, and writes as a
// tenant's ServiceAccount what that one's Role allows.
func TestRegionWorkerIdentity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, sa, _ := asRegionWorker(t, ctx, variant{overlay: regionOverlay})
	clients := kubernetes.NewForConfigOrDie(admin.cfg)

	// A tenant: the example's namespace team-a, whose RoleBinding lets the
	// worker impersonate there, and ServiceAccount deployer with a Role
	// over ConfigMaps there, as a platform team sets one up.
	const tenant = tenantNamespace
	_, err := clients.CoreV1().ServiceAccounts(tenant).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = clients.CoreV1().ServiceAccounts(tenant).Delete(context.Background(), "deployer", metav1.DeleteOptions{})
		_ = clients.RbacV1().Roles(tenant).Delete(context.Background(), "deployer", metav1.DeleteOptions{})
		_ = clients.RbacV1().RoleBindings(tenant).Delete(context.Background(), "deployer", metav1.DeleteOptions{})
	})
	require.NoError(t, err)
	_, err = clients.RbacV1().Roles(tenant).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = clients.RbacV1().RoleBindings(tenant).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: tenant}}}, metav1.CreateOptions{})
	require.NoError(t, err)

	cm := &unstructured.Unstructured{}
	require.NoError(t, cm.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"`+tenant+`","labels":{"ferry.dev/app":"tenant"}},"data":{"a":"1"}}`)))
	_, err = sa.apply(ctx, cm, false)
	require.True(t, apierrors.IsForbidden(err), "the region worker writes nothing as itself: %v", err)

	// As the tenant's ServiceAccount, what ferry-worker does for an app whose
	// project names it.
	impCfg := rest.CopyConfig(sa.cfg)
	impCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + tenant + ":deployer"}
	asTenant := connect(t, impCfg)
	_, err = asTenant.apply(ctx, cm, false)
	require.NoError(t, err, "as the tenant's ServiceAccount: apply the ConfigMap")
	deployment := &unstructured.Unstructured{}
	require.NoError(t, deployment.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"`+tenant+`"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)))
	_, err = asTenant.apply(ctx, deployment, false)
	require.True(t, apierrors.IsForbidden(err), "the tenant's Role has no Deployments: %v", err)
	require.Contains(t, err.Error(), `User "system:serviceaccount:`+tenant+`:deployer"`)

	// Reading and watching stay the worker's own.
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	list, err := sa.dyn.Resource(configMaps).List(ctx, metav1.ListOptions{LabelSelector: "ferry.dev/app=tenant"})
	require.NoError(t, err, "list across namespaces")
	assert.Len(t, list.Items, 1)
	w, err := sa.dyn.Resource(configMaps).Watch(ctx, metav1.ListOptions{LabelSelector: "ferry.dev/app=tenant"})
	require.NoError(t, err, "watch across namespaces (the informer cache)")
	w.Stop()
	require.NoError(t, asTenant.dyn.Resource(configMaps).Namespace(tenant).Delete(ctx, "settings", metav1.DeleteOptions{}))

	// A project naming a controller's ServiceAccount gets nothing from the
	// cluster: the worker may not become it.
	sysCfg := rest.CopyConfig(sa.cfg)
	sysCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kube-system:replicaset-controller"}
	_, err = kubernetes.NewForConfigOrDie(sysCfg).CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "impersonating kube-system's replicaset-controller: %v", err)
	require.Contains(t, err.Error(), "cannot impersonate resource \"serviceaccounts\"")
}

// TestSingleTenantRegionWorkerIdentity: with components/single-tenant the
// region worker itself may do every verb of a sync, including apps that
// ship RBAC of their own.
func TestSingleTenantRegionWorkerIdentity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, sa, _ := asRegionWorker(t, ctx, variant{overlay: regionOverlay, singleTenant: true})

	// A sync: server-side apply of a namespace and objects in it, RBAC that
	// grants verbs the worker itself lacks, then get, list, watch, delete.
	app := "deploy-rbac"
	objs := []string{
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"deploy-rbac"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"deploy-rbac","labels":{"ferry.dev/app":"deploy-rbac"}},"data":{"a":"1"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"deploy-rbac","labels":{"ferry.dev/app":"deploy-rbac"}},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"deploy-rbac-all","labels":{"ferry.dev/app":"deploy-rbac"}},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"deploy-rbac-all","namespace":"deploy-rbac","labels":{"ferry.dev/app":"deploy-rbac"}},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"deploy-rbac-all"},"subjects":[{"kind":"ServiceAccount","name":"default","namespace":"deploy-rbac"}]}`,
	}
	var applied []*unstructured.Unstructured
	for _, s := range objs {
		obj := &unstructured.Unstructured{}
		require.NoError(t, obj.UnmarshalJSON([]byte(s)))
		_, err := sa.apply(ctx, obj, false)
		require.NoError(t, err, "as the region worker: apply %s %s", obj.GetKind(), obj.GetName())
		applied = append(applied, obj)
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	_, err := sa.dyn.Resource(deployments).Namespace(app).Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	list, err := sa.dyn.Resource(deployments).List(ctx, metav1.ListOptions{LabelSelector: "ferry.dev/app=" + app})
	require.NoError(t, err, "list across namespaces")
	assert.Len(t, list.Items, 1)
	w, err := sa.dyn.Resource(deployments).Watch(ctx, metav1.ListOptions{LabelSelector: "ferry.dev/app=" + app})
	require.NoError(t, err, "watch across namespaces (the informer cache)")
	w.Stop()
	for _, obj := range slices.Backward(applied) {
		gvk := obj.GroupVersionKind()
		m, err := sa.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err)
		var ri dynamic.ResourceInterface = sa.dyn.Resource(m.Resource)
		if obj.GetNamespace() != "" {
			ri = sa.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		}
		require.NoError(t, ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}), "as the region worker: delete %s %s", gvk.Kind, obj.GetName())
	}
}
