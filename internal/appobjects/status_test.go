package appobjects

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/ferry-gitops/ferry/internal/app"
)

func fakeObjects(t *testing.T, objs ...*unstructured.Unstructured) (*Objects, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schemaGVR]string{Applications: "ApplicationList"}, toObjects(objs)...)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	return &Objects{Client: client, now: func() time.Time { return now }}, client
}

func statusWrites(c *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

func readStatus(t *testing.T, o *Objects) map[string]any {
	t.Helper()
	u, err := o.Client.Resource(Applications).Namespace("argocd").Get(context.Background(), "guestbook", metav1.GetOptions{})
	require.NoError(t, err)
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	return st
}

func TestWriteStatusWritesOnChangeOnly(t *testing.T) {
	o, client := fakeObjects(t, object(t, guestbook))
	ctx := context.Background()
	st := &app.Status{Sync: app.SyncStatus{Status: app.SyncStatusOutOfSync, Revision: "abc"}, Health: app.HealthStatus{Status: app.HealthMissing}}
	require.NoError(t, o.WriteStatus(ctx, "argocd/guestbook", st, nil))
	require.Equal(t, 1, statusWrites(client))
	got := readStatus(t, o)
	require.Equal(t, "OutOfSync", got["sync"].(map[string]any)["status"])
	require.Equal(t, "Missing", got["health"].(map[string]any)["status"])

	require.NoError(t, o.WriteStatus(ctx, "argocd/guestbook", st, nil))
	require.Equal(t, 1, statusWrites(client), "the same status again writes nothing")

	require.NoError(t, o.WriteStatus(ctx, "argocd/gone", st, nil), "an object that is gone is no error")
}

func TestWriteStatusSaysWhatIsInvalid(t *testing.T) {
	u := object(t, guestbook)
	require.NoError(t, unstructured.SetNestedField(u.Object, "x", "spec", "sourcee"))
	u.SetGeneration(1)
	o, client := fakeObjects(t, u)
	ctx := context.Background()
	require.NoError(t, o.WriteStatus(ctx, "argocd/guestbook", nil, nil))
	conds, _, _ := unstructured.NestedSlice(readStatus(t, o), "conditions")
	require.Len(t, conds, 1)
	c := conds[0].(map[string]any)
	require.Equal(t, ConditionInvalidSpec, c["type"])
	require.Contains(t, c["message"], "spec.sourcee")
	require.Equal(t, "Synced", readStatus(t, o)["sync"].(map[string]any)["status"], "the status the object had is kept")
	require.EqualValues(t, 1, readStatus(t, o)[ObservedGeneration], "the generation the condition is about")

	o.now = func() time.Time { return time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC) }
	require.NoError(t, o.WriteStatus(ctx, "argocd/guestbook", nil, nil))
	require.Equal(t, 1, statusWrites(client), "the same problem keeps its condition and time")

	// Fixed: the condition goes.
	fixed, err := o.Client.Resource(Applications).Namespace("argocd").Get(ctx, "guestbook", metav1.GetOptions{})
	require.NoError(t, err)
	unstructured.RemoveNestedField(fixed.Object, "spec", "sourcee")
	fixed.SetGeneration(2) // as the API server counts a change of the spec
	_, err = o.Client.Resource(Applications).Namespace("argocd").Update(ctx, fixed, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, o.WriteStatus(ctx, "argocd/guestbook", nil, nil))
	_, found, _ := unstructured.NestedSlice(readStatus(t, o), "conditions")
	require.False(t, found)
	require.EqualValues(t, 2, readStatus(t, o)[ObservedGeneration])
}
