package devenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// TestControlCluster: the control cluster serves Argo CD's kinds in
// namespace argocd, takes an Application as Argo CD's users write it, and
// collects what an Application owns once it is gone (the controller
// manager's garbage collector, which an app of apps' children rely on).
func TestControlCluster(t *testing.T) {
	require.Equal(t, devenv.ControlContext, stack.ControlContext)
	require.Equal(t, devenv.ControlNamespace, stack.ControlNamespace)
	cfg, err := stack.RestConfig(stack.ControlContext)
	require.NoError(t, err)
	dyn := dynamic.NewForConfigOrDie(cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := timeout(t, 60*time.Second)

	apps := dyn.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}).Namespace(stack.ControlNamespace)
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "guestbook"},
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": "https://git.example.com/guestbook.git", "path": "guestbook"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "guestbook"},
		},
	}}
	created, err := apps.Create(ctx, app, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, kind := range []string{"appprojects", "applicationsets"} {
		_, err := dyn.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: kind}).
			Namespace(stack.ControlNamespace).List(ctx, metav1.ListOptions{})
		require.NoError(t, err, kind)
	}

	owned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned-by-guestbook", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Name: "guestbook", UID: created.GetUID(),
	}}}}
	_, err = cs.CoreV1().ConfigMaps(stack.ControlNamespace).Create(ctx, owned, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, apps.Delete(ctx, "guestbook", metav1.DeleteOptions{}))
	waitFor(t, ctx, "the garbage collector deletes what the Application owned", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(stack.ControlNamespace).Get(ctx, owned.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
