package appobjects

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestChildrenTouchOnlyTheirParentsObjects: a parent writes its child as
// an object of its namespace carrying its label and tracking id, deletes
// only its own, and leaves an object of the same name that someone else
// made alone.
func TestChildrenTouchOnlyTheirParentsObjects(t *testing.T) {
	users := object(t, guestbook) // argocd/guestbook, made by a user
	o, _ := fakeObjects(t, users)
	c := &Children{Client: o.Client, Namespace: "argocd"}
	ctx := context.Background()
	child, err := app.Read([]byte(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"child","namespace":"argocd"},
"spec":{"project":"default","source":{"repoURL":"https://git.example/apps.git","path":"child"},"destination":{"name":"in-cluster","namespace":"child"}}}`), app.ValidateOptions{})
	require.NoError(t, err)

	// The fake client has no server-side apply (the e2e tests write
	// through a real API server): create what Write applies.
	u, err := childObject("platform", "argocd", child)
	require.NoError(t, err)
	_, err = o.Client.Resource(Applications).Namespace("argocd").Create(ctx, u, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := o.Client.Resource(Applications).Namespace("argocd").Get(ctx, "child", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "platform", got.GetLabels()[kube.LabelApp])
	require.True(t, kube.IsTracked("platform", got), "the parent's tracking id")
	back, err := Read(got, app.ValidateOptions{})
	require.NoError(t, err, "the object reads back as an Application")
	require.Equal(t, child.SpecDigest(), back.SpecDigest(), "with the spec Git holds")

	exists, err := c.Exists(ctx, "platform", "child")
	require.NoError(t, err)
	require.True(t, exists)
	_, err = c.Exists(ctx, "other-parent", "child")
	require.ErrorIs(t, err, ErrNotOwned, "another parent's child")

	_, err = c.Write(ctx, "platform", &app.Application{Metadata: app.ObjectMeta{Name: "guestbook"}})
	require.ErrorIs(t, err, ErrNotOwned, "a user's object of the child's name is not overwritten")
	_, err = c.Delete(ctx, "platform", "guestbook")
	require.ErrorIs(t, err, ErrNotOwned, "nor deleted")

	found, err := c.Delete(ctx, "platform", "child")
	require.NoError(t, err)
	require.True(t, found)
	found, err = c.Delete(ctx, "platform", "child")
	require.NoError(t, err)
	require.False(t, found, "gone")

	ns, name := c.Place("team-a/platform", "child")
	require.Equal(t, []string{"team-a", "team-a/child"}, []string{ns, name}, "a parent of another namespace writes its children there")
}
