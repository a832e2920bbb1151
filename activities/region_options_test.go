package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSyncOptionsOf: the operation's options are parsed once into the
// typed value every step reads; options that do not parse fail the
// activity for good, naming the app, the field and the item.
func TestSyncOptionsOf(t *testing.T) {
	opts, err := syncOptionsOf("web", []string{"CreateNamespace=true", "Prune=false", "Force=true", "PrunePropagationPolicy=orphan"})
	require.NoError(t, err)
	assert.Equal(t, app.SyncOptions{CreateNamespace: true, PruneFalse: true, Force: true, PrunePropagationPolicy: app.PropagationOrphan}, opts)

	opts, err = syncOptionsOf("web", nil)
	require.NoError(t, err)
	assert.Equal(t, app.SyncOptions{}, opts)

	opts, err = syncOptionsOf("web", []string{"CreateNamespace=true", "Retry=true"})
	require.NoError(t, err, "an option Argo CD does not have is ignored, as Argo CD ignores it")
	assert.Equal(t, app.SyncOptions{CreateNamespace: true}, opts)

	_, err = syncOptionsOf("web", []string{"CreateNamespace=yes", "Prune=ask"})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.True(t, appErr.NonRetryable(), "no retry fixes a spec")
	assert.Equal(t, contract.ErrInvalidSource, appErr.Type())
	assert.Contains(t, appErr.Error(), `app "web": spec.syncPolicy.syncOptions: `)
	assert.Contains(t, appErr.Error(), `"CreateNamespace=yes"`, "every bad item is named")
	assert.Contains(t, appErr.Error(), `"Prune=ask"`, "every bad item is named")
}
