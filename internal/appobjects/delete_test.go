package appobjects

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// ferry app delete and ferry-server set the object's finalizers as argocd app delete does.
func TestDeleteFinalizers(t *testing.T) {
	other := "example.com/keep"
	for _, tc := range []struct {
		name    string
		have    []string
		cascade bool
		policy  string
		want    []string
	}{
		{"cascade adds the finalizer", []string{other}, true, "", []string{other, app.ResourcesFinalizer}},
		{"cascade keeps background", []string{app.BackgroundFinalizer}, true, "", []string{app.BackgroundFinalizer}},
		{"a policy replaces the finalizer's", []string{app.BackgroundFinalizer}, true, "foreground", []string{app.ResourcesFinalizer}},
		{"background", nil, true, "background", []string{app.BackgroundFinalizer}},
		{"no cascade removes it", []string{app.ForegroundFinalizer, other}, false, "", []string{other}},
	} {
		got, err := DeleteFinalizers(tc.have, tc.cascade, tc.policy)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	_, err := DeleteFinalizers(nil, true, "orphan")
	require.ErrorContains(t, err, "propagation policy orphan")
}
