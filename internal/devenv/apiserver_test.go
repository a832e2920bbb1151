package devenv_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAPIServerStopAndStart: a region's kube-apiserver stopped refuses
// connections while the other region answers; started again on the same
// port, it serves what etcd kept, and the region works: a new namespace
// gets its ServiceAccount and a Deployment in it becomes Available.
func TestAPIServerStopAndStart(t *testing.T) {
	down, up := stack.Regions[1], stack.Regions[0]
	cs, other := kubeClient(t, down), kubeClient(t, up)
	ns := newNamespace(t, cs)
	ctx := timeout(t, 3*time.Minute)
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	require.NoError(t, stack.StopAPIServer(down))
	stopped := true
	t.Cleanup(func() {
		if stopped { // the other tests need the region
			require.NoError(t, stack.StartAPIServer(context.Background(), down))
		}
	})
	require.ErrorContains(t, stack.StopAPIServer(down), "already stopped")

	_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
	require.Error(t, err)
	var opErr *net.OpError
	require.True(t, errors.As(err, &opErr), "a connection error, not an answer: %v", err)
	require.False(t, apierrors.IsNotFound(err))
	_, err = other.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	require.NoError(t, err, "region %s still answers", up)
	require.NoError(t, stack.Check(), "a kube-apiserver stopped on purpose is not a crash")

	require.NoError(t, stack.StartAPIServer(ctx, down))
	stopped = false
	require.ErrorContains(t, stack.StartAPIServer(ctx, down), "it is running")

	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
	require.NoError(t, err, "etcd kept the region's data")
	require.Equal(t, "v", cm.Data["k"])
	ns2 := newNamespace(t, cs) // the controller manager gives it its ServiceAccount
	_, err = cs.AppsV1().Deployments(ns2).Create(ctx, deployment("after", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, "Deployment "+ns2+"/after Available after the restart", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns2).Get(ctx, "after", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.AvailableReplicas == 2 && hasCondition(d.Status.Conditions, appsv1.DeploymentAvailable), nil
	})
	require.NoError(t, stack.Check(), "every process of the stack runs")
	pids := stack.Pids()
	require.Contains(t, pids, down+"-apiserver")
}
