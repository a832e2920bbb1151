package kube

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestTrackingID(t *testing.T) {
	for _, tc := range []struct {
		key  app.ResourceKey
		want string
	}{
		{app.ResourceKey{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, "guestbook:apps/Deployment:shop/web"},
		{app.ResourceKey{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}, "guestbook:/Service:shop/web"},
		{app.ResourceKey{Version: "v1", Kind: "Namespace", Name: "shop"}, "guestbook:/Namespace:/shop"},
		{app.ResourceKey{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:view"}, "guestbook:rbac.authorization.k8s.io/ClusterRole:/system:view"},
	} {
		assert.Equal(t, tc.want, TrackingID("guestbook", tc.key))
	}
}

func TestIsTracked(t *testing.T) {
	obj := object("apps/v1", "Deployment", "shop", "web")
	assert.False(t, IsTracked("guestbook", obj), "no annotation")

	Track("guestbook", obj)
	assert.Equal(t, "guestbook", obj.GetLabels()[LabelApp])
	assert.True(t, IsTracked("guestbook", obj))
	assert.False(t, IsTracked("other", obj), "another app")
	assert.Equal(t, "guestbook", trackedBy(obj))

	// A copy under another name keeps the label and annotation, not ownership.
	copied := obj.DeepCopy()
	copied.SetName("web-copy")
	assert.False(t, IsTracked("guestbook", copied))

	// The version does not matter.
	moved := obj.DeepCopy()
	moved.SetAPIVersion("apps/v2")
	assert.True(t, IsTracked("guestbook", moved))

	// A label alone is not ownership.
	labelled := object("apps/v1", "Deployment", "shop", "web")
	labelled.SetLabels(map[string]string{LabelApp: "guestbook"})
	assert.False(t, IsTracked("guestbook", labelled))
}

func TestValidAppName(t *testing.T) {
	require.NoError(t, validAppName("guestbook"))
	require.NoError(t, validAppName("team-a/web"), "an app of another namespace")
	for _, bad := range []string{"", "has:colon", "/web", "team-a/", "a/b/c", "Team/web", "-leading", string(make([]byte, 64))} {
		err := validAppName(bad)
		assert.Error(t, err, "%q", bad)
		assert.True(t, IsInvalid(err), "%q", bad)
	}
}

func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace(namespace)
	o.SetName(name)
	return o
}

// TestAppLabel: a name too long for a label value gets a shortened, still
// distinct one; a short name is its own label.
func TestAppLabel(t *testing.T) {
	assert.Equal(t, "guestbook", AppLabel("guestbook"))
	assert.Equal(t, "team-a_web", AppLabel("team-a/web"), "Argo CD's form of an app of another namespace")
	nsLong := "team-a/" + strings.Repeat("b", 60)
	assert.Empty(t, validation.IsValidLabelValue(AppLabel(nsLong)), nsLong)
	long := strings.Repeat("a", 60) + ".example.team-apps"
	other := strings.Repeat("a", 60) + ".example.team-other"
	require.NoError(t, validAppName(long))
	for _, n := range []string{long, other} {
		assert.Empty(t, validation.IsValidLabelValue(AppLabel(n)), n)
	}
	assert.NotEqual(t, AppLabel(long), AppLabel(other))
	obj := object("v1", "ConfigMap", "shop", "settings")
	Track(long, obj)
	assert.True(t, IsTracked(long, obj))
	assert.Equal(t, long, trackedBy(obj))
}
