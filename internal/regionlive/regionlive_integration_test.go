package regionlive_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

const region = "us-east-1"

var stack *devenv.Stack

// TestMain starts one real control plane (kube-apiserver, controllers,
// kwok) for the package. With -short only the tests over fake clients run.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{region}}, &stack))
}

// TestRegionLive deploys a Deployment and reads it back as the server
// and the CLI do: its tree (the controllers' ReplicaSet and kwok's Pod),
// its events, its pods' logs.
func TestRegionLive(t *testing.T) {
	if stack == nil {
		t.Skip("-short: no control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs := &regionlive.Regions{Kubeconfig: stack.Kubeconfig}
	r, err := rs.Region(region)
	require.NoError(t, err)
	again, err := rs.Region(region)
	require.NoError(t, err)
	require.Same(t, r, again, "a region is connected once")

	ns := "regionlive-" + strings.ToLower(t.Name())
	_, err = r.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	labels := map[string]string{"app": "web"}
	deploy, err := r.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	key := app.ResourceKey{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "web"}

	// The tree: the Deployment, then its ReplicaSet and that one's Pod.
	var nodes []regionlive.Node
	require.Eventually(t, func() bool {
		nodes, err = r.Tree(ctx, []app.ResourceKey{key, {Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "not-there"}})
		require.NoError(t, err)
		return len(nodes) == 3 && nodes[1].Kind == "Pod" && nodes[1].Info[1].Value == "1/1"
	}, time.Minute, 200*time.Millisecond, "the tree has the Deployment's ReplicaSet and Pod: %+v", nodes)
	dep, pod, rsNode := nodes[0], nodes[1], nodes[2]
	assert.Equal(t, []string{"Deployment", "Pod", "ReplicaSet"}, []string{dep.Kind, pod.Kind, rsNode.Kind})
	assert.Equal(t, string(deploy.UID), dep.UID)
	assert.Empty(t, dep.ParentRefs)
	assert.Equal(t, []regionlive.Ref{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "web", UID: dep.UID}}, rsNode.ParentRefs)
	assert.Equal(t, []regionlive.Ref{{Group: "apps", Version: "v1", Kind: "ReplicaSet", Namespace: ns, Name: rsNode.Name, UID: rsNode.UID}}, pod.ParentRefs)
	assert.Contains(t, rsNode.Info, regionlive.InfoItem{Name: "Revision", Value: "Rev:1"})
	assert.Equal(t, []regionlive.InfoItem{{Name: "Status Reason", Value: "Running"}, {Name: "Containers", Value: "1/1"}}, pod.Info)
	assert.Equal(t, []string{"nginx:1.27"}, pod.Images)
	for _, n := range nodes {
		assert.Equal(t, region, n.Region)
		assert.NotEmpty(t, n.CreatedAt)
		assert.NotNil(t, n.Health, n.Kind)
	}

	// The Deployment's events: the deployment controller scaled its ReplicaSet.
	events, err := r.Events(ctx, ns, "web", dep.UID)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	for _, e := range events {
		assert.Equal(t, dep.UID, string(e.InvolvedObject.UID))
	}
	assert.Equal(t, "ScalingReplicaSet", events[0].Reason)

	// Its pods' logs: kwok serves one line, stamped.
	containers, err := r.Containers(ctx, []app.ResourceKey{key, {Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cm"}}, "")
	require.EqualError(t, err, "ConfigMap "+ns+"/cm: has no pods: give a Pod or a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job")
	require.Equal(t, []regionlive.Container{{Region: region, Namespace: ns, Pod: pod.Name, Container: "nginx"}}, containers)
	var lines []string
	var stamps []time.Time
	require.NoError(t, r.Logs(ctx, containers[0], regionlive.LogOptions{Tail: -1}, func(text string, at time.Time) {
		lines, stamps = append(lines, text), append(stamps, at)
	}))
	assert.Equal(t, []string{devenv.FakeLogLine}, lines)
	assert.Equal(t, []time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, stamps)
}

// TestTreeOfManyObjects reads the tree of an app with many ConfigMaps in
// its namespace (one list) and a few in another (a GET each), one of each
// missing, as the real API server answers them.
func TestTreeOfManyObjects(t *testing.T) {
	if stack == nil {
		t.Skip("-short: no control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := (&regionlive.Regions{Kubeconfig: stack.Kubeconfig}).Region(region)
	require.NoError(t, err)
	var managed []app.ResourceKey
	var want []string
	for _, ns := range []string{"regionlive-many", "regionlive-few"} {
		_, err = r.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		n := 20
		if ns == "regionlive-few" {
			n = 2
		}
		for i := range n {
			name := fmt.Sprintf("cm-%02d", i)
			_, err := r.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			require.NoError(t, err)
			want = append(want, ns+"/"+name)
		}
		// In reverse order; the list also holds the namespace's
		// kube-root-ca.crt, which is not the app's.
		for i := range n {
			managed = append(managed, app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: fmt.Sprintf("cm-%02d", n-1-i)})
		}
		managed = append(managed, app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "not-there"})
		slices.Reverse(want[len(want)-n:])
	}
	nodes, err := r.Tree(ctx, managed)
	require.NoError(t, err)
	var got []string
	for _, n := range nodes {
		got = append(got, n.Namespace+"/"+n.Name)
		assert.Equal(t, "ConfigMap", n.Kind)
		assert.NotEmpty(t, n.UID)
		assert.NotEmpty(t, n.ResourceVersion)
	}
	assert.Equal(t, want, got, "every ConfigMap of the app that exists, in the order given")
}

func TestRegionWithoutContext(t *testing.T) {
	if stack == nil {
		t.Skip("-short: no control plane")
	}
	_, err := (&regionlive.Regions{Kubeconfig: stack.Kubeconfig}).Region("nowhere")
	var ce *regionlive.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "nowhere", ce.Region)
	assert.Contains(t, err.Error(), "region nowhere: load kubeconfig")
	assert.Contains(t, err.Error(), "(each region is read through the kubeconfig context named after it)")
}
