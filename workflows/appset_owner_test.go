package workflows

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
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

// TestMetadataEditOfAppSetApp: a user may change the labels and
// annotations of a set's app (as kubectl annotate may in Argo CD), and the
// app stays the set's; a change of its spec or finalizers is still
// refused, and another owner's app is not opened up.
func TestMetadataEditOfAppSetApp(t *testing.T) {
	cur := app.Application{APIVersion: app.APIVersion, Kind: app.Kind, Metadata: app.ObjectMeta{Name: "web", Annotations: map[string]string{"a": "1"}},
		Spec: app.Spec{Project: "default", Source: app.Source{RepoURL: "https://git.example/r.git", Path: "web"},
			Destination: &app.Destination{Name: "in-cluster", Namespace: "web"}}}
	edited := cur
	edited.Metadata.Annotations = map[string]string{"a": "1", "team": "blue"}
	edited.Metadata.Labels = map[string]string{"tier": "gold"}
	spec := edited
	spec.Spec.Source = app.Source{RepoURL: "https://git.example/r.git", Path: "other"}
	fin := edited
	fin.Metadata.Finalizers = []string{app.ResourcesFinalizer}

	set := &contract.Owner{AppSet: "team"}
	s := &appState{app: cur, Carried: Carried{Owner: set}}
	raw := func(a app.Application) json.RawMessage { b, _ := json.Marshal(a); return b }
	require.NoError(t, s.validateSpec(nil, raw(edited), contract.SpecRequest{}))
	require.True(t, metadataEdit(set, contract.SpecRequest{}, &cur, &edited))
	for name, a := range map[string]app.Application{"spec": spec, "finalizers": fin} {
		err := s.validateSpec(nil, raw(a), contract.SpecRequest{})
		require.True(t, contract.IsOwnerRefusal(err), "%s: %v", name, err)
	}
	require.False(t, metadataEdit(set, contract.SpecRequest{ForceAdopt: true}, &cur, &edited), "an adoption takes the app over")
	require.False(t, metadataEdit(&contract.Owner{Parent: "p"}, contract.SpecRequest{}, &cur, &edited), "an app of apps' child stays closed")
	s.Owner = &contract.Owner{Parent: "p"}
	require.True(t, contract.IsOwnerRefusal(s.validateSpec(nil, raw(edited), contract.SpecRequest{})))
}
