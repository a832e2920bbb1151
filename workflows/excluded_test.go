package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestNoteExcludedSetsOneConditionAResourceAndClearsThem(t *testing.T) {
	s := &appState{}
	s.Status.Conditions = []app.Condition{{Type: conditionSyncError, Message: "other"}}
	secret := app.ResourceKey{Version: "v1", Kind: "Secret", Namespace: "web", Name: "token"}
	policy := app.ResourceKey{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Namespace: "web", Name: "deny"}
	s.noteExcluded("a", []app.ResourceKey{secret, policy})
	s.noteExcluded("b", []app.ResourceKey{secret})
	require.Equal(t, []app.Condition{
		{Type: conditionSyncError, Message: "other"},
		{Type: conditionExcludedResource, Message: "Resource /Secret token is excluded in the settings"},
		{Type: conditionExcludedResource, Message: "Resource networking.k8s.io/NetworkPolicy deny is excluded in the settings"},
	}, s.Status.Conditions)

	s.noteExcluded("a", []app.ResourceKey{secret})
	s.noteExcluded("b", nil)
	require.Equal(t, []app.Condition{
		{Type: conditionSyncError, Message: "other"},
		{Type: conditionExcludedResource, Message: "Resource /Secret token is excluded in the settings"},
	}, s.Status.Conditions)
	s.noteExcluded("a", nil)
	require.Equal(t, []app.Condition{{Type: conditionSyncError, Message: "other"}}, s.Status.Conditions)
}
