package workflows

import (
	"testing"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
)

// TestAppSetOwnership: an ApplicationSet changes only the apps it
// generated; a user's app, another set's and an app of apps' child are
// refused with their owner named, and a user may still adopt its apps.
func TestAppSetOwnership(t *testing.T) {
	set := contract.SpecRequest{AppSet: "team"}
	require.NoError(t, contract.CheckOwner("a", &contract.Owner{AppSet: "team"}, set))
	require.NoError(t, contract.CheckOwner("a", nil, contract.SpecRequest{AppSet: "team", Created: true}))
	for owner, want := range map[*contract.Owner]string{
		{}:                 `app "a" is owned by a user (ferry app apply): applicationset "team" cannot change or delete it`,
		{AppSet: "other"}:  `app "a" is owned by applicationset "other": applicationset "team" cannot change or delete it`,
		{Parent: "parent"}: `app "a" is owned by app of apps "parent": applicationset "team" cannot change or delete it`,
		nil:                `app "a" has no recorded owner and applicationset "team" did not create it`,
	} {
		err := contract.CheckOwner("a", owner, set)
		require.True(t, contract.IsOwnerRefusal(err), "%v", owner)
		require.ErrorContains(t, err, want)
	}
	err := contract.CheckOwner("a", &contract.Owner{AppSet: "team"}, contract.SpecRequest{})
	require.ErrorContains(t, err, `app "a" is owned by applicationset "team" (its spec comes from the generators of applicationset "team")`)
	require.NoError(t, contract.CheckOwner("a", &contract.Owner{AppSet: "team"}, contract.SpecRequest{ForceAdopt: true}))
	require.ErrorContains(t, contract.CheckOwner("a", &contract.Owner{AppSet: "team"}, contract.SpecRequest{Parent: "p"}), `app "a" is owned by applicationset "team": app of apps "p" cannot`)

	require.NoError(t, checkDeleteOwner("a", &contract.Owner{AppSet: "team"}, contract.DeleteRequest{AppSet: "team"}))
	require.ErrorContains(t, checkDeleteOwner("a", &contract.Owner{}, contract.DeleteRequest{AppSet: "team"}), `app "a" is owned by a user (ferry app apply): applicationset "team" cannot delete it`)
	require.NoError(t, checkDeleteOwner("a", &contract.Owner{AppSet: "team"}, contract.DeleteRequest{}))
}
