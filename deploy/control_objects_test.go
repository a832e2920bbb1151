package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// application is an Application as a user applies it to ask for a sync and
// a hard refresh, with Argo CD's resources finalizer.
func application(t *testing.T, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(fmt.Appendf(nil, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: %s
  annotations:
    %s: hard
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source:
    repoURL: https://git.example.com/argoproj/argocd-example-apps.git
    targetRevision: HEAD
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
operation:
  sync: {}
`, name, namespace, appobjects.RefreshAnnotation), &u.Object))
	return u
}

// TestControlWorkerWorksApplications: with components/argocd-namespace
// installed for real in the control cluster, whose Application CRD the
// stack installed from deploy/crds, the control worker's ServiceAccount
// makes every call of --control-namespace=argocd, with client-go's and the
// worker's own code where it can: leader election takes the Lease
// ferry-applications (get, create), releases it (update) and takes it over
// (get, update); an informer lists and watches the Application objects; the
// controller's merge patch clears an object's operation, refresh annotation
// and resources finalizer; appobjects.Objects writes its status (get, and
// update of applications/status); appobjects.Children writes and deletes
// an app of apps' child object. And nothing more: it replaces no
// Application, reads and writes none of another namespace,
// lists and watches the AppProjects and ApplicationSets of its namespace
// but writes none, deletes no Lease and touches no other Lease, and writes
// no Secret or ConfigMap. With components/app-namespaces installed too, it
// lists, watches, patches and writes the status of the Applications of
// every namespace, and writes and deletes children there, and still
// replaces none.
func TestControlWorkerWorksApplications(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, saConfig := asControlWorker(t, ctx)
	sa := kubernetes.NewForConfigOrDie(saConfig)
	saDyn := dynamic.NewForConfigOrDie(saConfig)
	apps := saDyn.Resource(appobjects.Applications).Namespace(argocdNamespace)
	adminApps := admin.dyn.Resource(appobjects.Applications)
	const name = "rbac-check"
	key := appobjects.Key(argocdNamespace, name)
	_, err := adminApps.Namespace(argocdNamespace).Create(ctx, application(t, argocdNamespace, name), metav1.CreateOptions{})
	require.NoError(t, err)

	// The Lease, as the worker's leader election takes it.
	lead := func(identity string) (holder string) {
		t.Helper()
		leCtx, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		holders := make(chan string, 1)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Name: appobjects.LeaseName, Namespace: argocdNamespace},
				Client:     sa.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
			},
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second,
			ReleaseOnCancel: true, Name: appobjects.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					holders <- leaseHolder(ctx, admin)
					stop()
				},
				OnStoppedLeading: func() {},
			},
		})
		require.NoError(t, err)
		le.Run(leCtx) // returns once it released the Lease, or gave up
		select {
		case holder = <-holders:
		default:
		}
		return holder
	}
	assert.Equal(t, "ferry-control-1", lead("ferry-control-1"), "the first worker creates the Lease and holds it")
	assert.Empty(t, leaseHolder(ctx, admin), "a worker that stops releases the Lease")
	assert.Equal(t, "ferry-control-2", lead("ferry-control-2"), "the next worker takes the released Lease over")

	// The Application objects, as the worker's informer lists and watches
	// them: it sees an object, then a change to it.
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(saDyn, 0, argocdNamespace, nil)
	informer := factory.ForResource(appobjects.Applications).Informer()
	infCtx, stopInformer := context.WithTimeout(ctx, 30*time.Second)
	factory.Start(infCtx.Done())
	defer factory.Shutdown() // after stopInformer: it waits for the informer to stop
	defer stopInformer()
	require.True(t, cache.WaitForCacheSync(infCtx.Done(), informer.HasSynced), "the informer lists the Application objects")
	_, exists, _ := informer.GetIndexer().GetByKey(key)
	assert.True(t, exists, "the informer has %s", key)
	w, err := apps.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err, "watch the Application objects")
	w.Stop()
	_, err = adminApps.Namespace(argocdNamespace).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		o, ok, _ := informer.GetIndexer().GetByKey(key)
		return ok && o.(*unstructured.Unstructured).GetLabels()["team"] == "a"
	}, 20*time.Second, 100*time.Millisecond, "the informer sees the change")

	// The controller's merge patch: the operation asked for, the refresh
	// annotation and the resources finalizer go.
	cur, err := apps.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err, "get %s", key)
	body, err := json.Marshal(map[string]any{"operation": nil, "metadata": map[string]any{
		"annotations": map[string]any{appobjects.RefreshAnnotation: nil},
		"finalizers":  []string{}, "resourceVersion": cur.GetResourceVersion()}})
	require.NoError(t, err)
	patched, err := apps.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: appobjects.FieldManager})
	require.NoError(t, err, "patch %s", key)
	assert.NotContains(t, patched.Object, "operation")
	assert.NotContains(t, patched.GetAnnotations(), appobjects.RefreshAnnotation)
	assert.Empty(t, patched.GetFinalizers())

	// Its status, as the worker writes it.
	objects := &appobjects.Objects{Client: saDyn}
	require.NoError(t, objects.WriteStatus(ctx, key, &app.Status{
		Sync:   app.SyncStatus{Status: app.SyncStatusSynced, Revision: "abc123"},
		Health: app.HealthStatus{Status: app.HealthHealthy}}, nil), "write the status of %s", key)
	got, err := adminApps.Namespace(argocdNamespace).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	sync, _, _ := unstructured.NestedString(got.Object, "status", "sync", "status")
	health, _, _ := unstructured.NestedString(got.Object, "status", "health", "status")
	assert.Equal(t, []string{"Synced", "Healthy"}, []string{sync, health})

	// Nothing more.
	forbidden := func(err error, what string) {
		t.Helper()
		assert.True(t, apierrors.IsForbidden(err), "%s: want forbidden, got %v", what, err)
	}
	_, err = apps.Update(ctx, got, metav1.UpdateOptions{})
	forbidden(err, "replace an Application")

	// An app of apps' child, as the worker's own code writes and deletes it.
	children := &appobjects.Children{Client: saDyn, Namespace: argocdNamespace}
	child := childApplication(t, "rbac-child")
	_, err = children.Write(ctx, "rbac-parent", child)
	require.NoError(t, err, "write an app of apps' child object (server-side apply)")
	found, err := children.Delete(ctx, "rbac-parent", "rbac-child")
	require.NoError(t, err, "delete an app of apps' child object")
	assert.True(t, found)
	for _, gvr := range []schema.GroupVersionResource{appobjects.AppProjects, appobjects.ApplicationSets} {
		defs := saDyn.Resource(gvr).Namespace(argocdNamespace)
		_, err = defs.List(ctx, metav1.ListOptions{})
		require.NoError(t, err, "list the %s, as the worker's informer does", gvr.Resource)
		w, err := defs.Watch(ctx, metav1.ListOptions{})
		require.NoError(t, err, "watch the %s", gvr.Resource)
		w.Stop()
		_, err = defs.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1",
			"kind":     map[string]string{"appprojects": "AppProject", "applicationsets": "ApplicationSet"}[gvr.Resource],
			"metadata": map[string]any{"name": "written"}, "spec": map[string]any{}}}, metav1.CreateOptions{})
		forbidden(err, "create one of the "+gvr.Resource)
		_, err = saDyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		forbidden(err, "list the "+gvr.Resource+" of every namespace")
	}

	const elsewhere = "apps-elsewhere"
	createNamespace(t, ctx, admin, elsewhere)
	other, err := adminApps.Namespace(elsewhere).Create(ctx, application(t, elsewhere, name), metav1.CreateOptions{})
	require.NoError(t, err)
	otherApps := saDyn.Resource(appobjects.Applications).Namespace(elsewhere)
	_, err = otherApps.List(ctx, metav1.ListOptions{})
	forbidden(err, "list the Applications of "+elsewhere)
	_, err = otherApps.Watch(ctx, metav1.ListOptions{})
	forbidden(err, "watch the Applications of "+elsewhere)
	_, err = saDyn.Resource(appobjects.Applications).List(ctx, metav1.ListOptions{})
	forbidden(err, "list the Applications of every namespace")
	_, err = otherApps.Get(ctx, name, metav1.GetOptions{})
	forbidden(err, "get an Application of "+elsewhere)
	_, err = otherApps.Patch(ctx, name, types.MergePatchType, []byte(`{"operation":null}`), metav1.PatchOptions{})
	forbidden(err, "patch an Application of "+elsewhere)
	_, err = otherApps.UpdateStatus(ctx, other, metav1.UpdateOptions{})
	forbidden(err, "update the status of an Application of "+elsewhere)

	leases := sa.CoordinationV1().Leases(argocdNamespace)
	err = leases.Delete(ctx, appobjects.LeaseName, metav1.DeleteOptions{})
	forbidden(err, "delete the Lease")
	_, err = kubernetes.NewForConfigOrDie(admin.cfg).CoordinationV1().Leases(argocdNamespace).Create(ctx,
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "argocd-controller"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = leases.Get(ctx, "argocd-controller", metav1.GetOptions{})
	forbidden(err, "get another Lease")
	_, err = leases.Update(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "argocd-controller", Namespace: argocdNamespace}}, metav1.UpdateOptions{})
	forbidden(err, "update another Lease")
	_, err = sa.CoordinationV1().Leases(namespace).Create(ctx,
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: appobjects.LeaseName}}, metav1.CreateOptions{})
	forbidden(err, "create a Lease in "+namespace)

	_, err = sa.CoreV1().Secrets(argocdNamespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "written"}}, metav1.CreateOptions{})
	forbidden(err, "create a Secret in "+argocdNamespace)
	_, err = sa.CoreV1().ConfigMaps(argocdNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written"}}, metav1.CreateOptions{})
	forbidden(err, "create a ConfigMap in "+argocdNamespace)

	// With components/app-namespaces (--app-namespaces), the same calls
	// in every namespace, and still no replace.
	for _, o := range render(t, variant{overlay: "overlays/example/control", argocd: true, appNS: true}) {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding" {
			_, err := admin.apply(ctx, o, false)
			require.NoError(t, err, "apply %s %s", o.GetKind(), o.GetName())
		}
	}
	require.Eventually(t, func() bool {
		_, err := saDyn.Resource(appobjects.Applications).List(ctx, metav1.ListOptions{})
		return err == nil
	}, 20*time.Second, 200*time.Millisecond, "with components/app-namespaces, list the Applications of every namespace")
	w, err = saDyn.Resource(appobjects.Applications).Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err, "watch the Applications of every namespace")
	w.Stop()
	_, err = otherApps.Patch(ctx, name, types.MergePatchType, []byte(`{"operation":null}`), metav1.PatchOptions{FieldManager: appobjects.FieldManager})
	require.NoError(t, err, "patch an Application of "+elsewhere)
	require.NoError(t, objects.WriteStatus(ctx, appobjects.Key(elsewhere, name), &app.Status{
		Sync: app.SyncStatus{Status: app.SyncStatusSynced}, Health: app.HealthStatus{Status: app.HealthHealthy}}, nil),
		"write the status of an Application of "+elsewhere)
	_, err = children.Write(ctx, elsewhere+"/rbac-parent", child)
	require.NoError(t, err, "write the child object of an app of apps of "+elsewhere)
	_, err = children.Delete(ctx, elsewhere+"/rbac-parent", "rbac-child")
	require.NoError(t, err, "delete the child object of an app of apps of "+elsewhere)
	_, err = otherApps.Update(ctx, other, metav1.UpdateOptions{})
	forbidden(err, "replace an Application of "+elsewhere)
}

// childApplication is a child Application as an app of apps renders it.
func childApplication(t *testing.T, name string) *app.Application {
	t.Helper()
	a, err := app.Read(fmt.Appendf(nil, `{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":%q},
"spec":{"project":"default","source":{"repoURL":"https://git.example.com/apps.git","path":"child"},"destination":{"name":"in-cluster","namespace":"child"}}}`, name),
		app.ValidateOptions{})
	require.NoError(t, err)
	return a
}

// leaseHolder is the holder of the Lease ferry-applications as the admin
// reads it, or the error reading it.
func leaseHolder(ctx context.Context, admin *cluster) string {
	l, err := kubernetes.NewForConfigOrDie(admin.cfg).CoordinationV1().Leases(argocdNamespace).Get(ctx, appobjects.LeaseName, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
