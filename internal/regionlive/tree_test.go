package regionlive_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

var created = metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))

func meta(name, uid string, owner *metav1.OwnerReference) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid), CreationTimestamp: created, ResourceVersion: "7"}
	if owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return m
}

func owner(kind, name, uid string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid)}
}

func pod(name, uid string, own *metav1.OwnerReference, status corev1.PodStatus) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: meta(name, uid, own),
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}, {Name: "proxy", Image: "envoy:1.31"}}},
		Status:     status,
	}
}

func TestTreeWalksDeploymentReplicaSetPod(t *testing.T) {
	deploy := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta("web", "d1", nil)}
	deploy.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
	rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}, ObjectMeta: meta("web-5d9f", "r1", owner("Deployment", "web", "d1"))}
	rs.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
	two := int32(2)
	rs.Spec.Replicas = &two
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}
	otherRS := &appsv1.ReplicaSet{TypeMeta: rs.TypeMeta, ObjectMeta: meta("api-77aa", "r2", owner("Deployment", "api", "d2"))}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta("web", "s1", nil)}
	running := pod("web-5d9f-a", "p1", owner("ReplicaSet", "web-5d9f", "r1"), corev1.PodStatus{
		Phase:             corev1.PodRunning,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true}, {Name: "proxy", Ready: true}},
	})
	crashing := pod("web-5d9f-b", "p2", owner("ReplicaSet", "web-5d9f", "r1"), corev1.PodStatus{
		Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true},
			{Name: "proxy", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}},
	})
	stray := pod("debug", "p3", nil, corev1.PodStatus{Phase: corev1.PodRunning})
	r := fakeRegion(t, deploy, rs, otherRS, svc, running, crashing, stray)

	nodes, err := r.Tree(context.Background(), []app.ResourceKey{
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "gone"},
	})
	require.NoError(t, err)

	deployRef := regionlive.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "d1"}
	rsRef := regionlive.Ref{Group: "apps", Version: "v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d9f", UID: "r1"}
	type node struct {
		Kind, Name string
		Parents    []regionlive.Ref
		Info       []regionlive.InfoItem
		Images     []string
		Health     app.HealthStatusCode
	}
	var got []node
	for _, n := range nodes {
		require.Equal(t, "us-east-1", n.Region)
		require.Equal(t, "2026-12-01T10:00:00Z", n.CreatedAt)
		require.Equal(t, "7", n.ResourceVersion)
		var health app.HealthStatusCode
		if n.Health != nil {
			health = n.Health.Status
		}
		got = append(got, node{n.Kind, n.Name, n.ParentRefs, n.Info, n.Images, health})
	}
	want := []node{
		{Kind: "Deployment", Name: "web", Info: []regionlive.InfoItem{{Name: "Revision", Value: "Rev:2"}}, Health: app.HealthProgressing},
		{Kind: "Service", Name: "web", Health: app.HealthHealthy},
		{Kind: "Pod", Name: "web-5d9f-a", Parents: []regionlive.Ref{rsRef}, Images: []string{"nginx:1.27", "envoy:1.31"}, Health: app.HealthHealthy,
			Info: []regionlive.InfoItem{{Name: "Status Reason", Value: "Running"}, {Name: "Containers", Value: "2/2"}}},
		{Kind: "Pod", Name: "web-5d9f-b", Parents: []regionlive.Ref{rsRef}, Images: []string{"nginx:1.27", "envoy:1.31"}, Health: app.HealthDegraded,
			Info: []regionlive.InfoItem{{Name: "Status Reason", Value: "CrashLoopBackOff"}, {Name: "Containers", Value: "1/2"}}},
		{Kind: "ReplicaSet", Name: "web-5d9f", Parents: []regionlive.Ref{deployRef}, Info: []regionlive.InfoItem{{Name: "Revision", Value: "Rev:2"}}, Health: app.HealthProgressing},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}

	// The JSON is Argo CD's ResourceNode's, with Ferry's region.
	js, err := json.Marshal(nodes[4])
	require.NoError(t, err)
	require.JSONEq(t, `{"group":"apps","version":"v1","kind":"ReplicaSet","namespace":"shop","name":"web-5d9f","uid":"r1",
		"parentRefs":[{"group":"apps","version":"v1","kind":"Deployment","namespace":"shop","name":"web","uid":"d1"}],
		"info":[{"name":"Revision","value":"Rev:2"}],"resourceVersion":"7","health":{"status":"Progressing","message":"waiting for rollout: 1 of 2 replicas available"},
		"createdAt":"2026-12-01T10:00:00Z","region":"us-east-1"}`, string(js))
}

func TestEventsOfOneObjectOldestFirst(t *testing.T) {
	at := func(min int) metav1.Time { return metav1.NewTime(created.Add(time.Duration(min) * time.Minute)) }
	event := func(ns, name, objName, uid string, last metav1.Time, eventTime metav1.MicroTime) *corev1.Event {
		return &corev1.Event{
			TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: created},
			InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: objName, UID: types.UID(uid)},
			LastTimestamp:  last, EventTime: eventTime, Reason: name,
		}
	}
	r := fakeRegion(t,
		event("shop", "scaled", "web", "d1", at(5), metav1.MicroTime{}),
		event("shop", "created", "web", "d1", metav1.Time{}, metav1.NewMicroTime(at(1).Time)),
		event("shop", "old-web", "web", "d0", at(3), metav1.MicroTime{}),
		event("shop", "api", "api", "d2", at(2), metav1.MicroTime{}),
		event("default", "ns-created", "shop", "n1", at(4), metav1.MicroTime{}),
	)
	ctx := context.Background()
	reasons := func(ns, name, uid string) []string {
		events, err := r.Events(ctx, ns, name, uid)
		require.NoError(t, err)
		var out []string
		for _, e := range events {
			out = append(out, e.Reason)
		}
		return out
	}
	require.Equal(t, []string{"created", "scaled"}, reasons("shop", "web", "d1"))
	require.Equal(t, []string{"created", "old-web", "scaled"}, reasons("shop", "web", ""))
	require.Equal(t, []string{"ns-created"}, reasons("", "shop", ""), "a cluster-scoped object's events are in default")
}
