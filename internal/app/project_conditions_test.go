package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// PermissionConditions say in Argo CD's words (util/argo ValidatePermissions,
// its TestPermissions e2e test) what the project no longer permits.
func TestPermissionConditions(t *testing.T) {
	p := &AppProject{Metadata: ObjectMeta{Name: "team-a"}, Spec: ProjectSpec{
		SourceRepos:  []string{"https://git.example.com/team-a/*"},
		Destinations: []ProjectDestination{{Name: "us-east-1", Namespace: "team-a"}},
	}}
	cases := []struct {
		name  string
		repos []string
		dests []Destination
		want  []string
	}{
		{name: "permitted", repos: []string{"https://git.example.com/team-a/web.git"},
			dests: []Destination{{Name: "us-east-1", Namespace: "team-a"}}},
		{name: "repo", repos: []string{"https://git.example.com/team-b/web.git"},
			dests: []Destination{{Name: "us-east-1", Namespace: "team-a"}},
			want:  []string{"application repo https://git.example.com/team-b/web.git is not permitted in project 'team-a'"}},
		{name: "destination by name", repos: []string{"https://git.example.com/team-a/web.git"},
			dests: []Destination{{Name: "us-east-1", Namespace: "team-a"}, {Name: "eu-west-1", Namespace: "team-a"}},
			want:  []string{"application destination server 'eu-west-1' and namespace 'team-a' do not match any of the allowed destinations in project 'team-a'"}},
		{name: "both, destination by server", repos: []string{"https://elsewhere.example.com/x.git"},
			dests: []Destination{{Server: "https://kubernetes.default.svc", Namespace: "kube-system"}},
			want: []string{"application repo https://elsewhere.example.com/x.git is not permitted in project 'team-a'",
				"application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'team-a'"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, p.PermissionConditions(c.repos, c.dests, nil))
		})
	}
}

// Prohibits judges one object of a compare as CheckObjects judges a sync's.
func TestProhibits(t *testing.T) {
	p := &AppProject{Metadata: ObjectMeta{Name: "team-a"}, Spec: ProjectSpec{
		Destinations:               []ProjectDestination{{Name: "us-east-1", Namespace: "team-a"}},
		NamespaceResourceBlacklist: []GroupKind{{Group: "", Kind: "Service"}},
	}}
	cm := ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}
	cases := map[string]struct {
		o    PlacedObject
		want string
	}{
		"permitted":       {o: PlacedObject{Key: cm, Known: true, Namespaced: true}},
		"blacklisted":     {o: PlacedObject{Key: ResourceKey{Version: "v1", Kind: "Service", Namespace: "team-a", Name: "web"}, Known: true, Namespaced: true}, want: "namespaced kind Service is not allowed (namespaceResourceBlacklist)"},
		"not whitelisted": {o: PlacedObject{Key: ResourceKey{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "x"}, Known: true}, want: "cluster-scoped kind ClusterRole is not allowed (clusterResourceWhitelist)"},
		"other namespace": {o: PlacedObject{Key: ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "x"}, Known: true, Namespaced: true}, want: "namespace kube-system of region us-east-1 is not a destination (destinations)"},
		"scope not known": {o: PlacedObject{Key: ResourceKey{Group: "example.com", Kind: "Widget", Name: "x"}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { assert.Equal(t, c.want, p.Prohibits("us-east-1", nil, c.o)) })
	}
}

// A resource counts in the app's sync status as its CountsAs, when set.
func TestRollUpSyncCountsAs(t *testing.T) {
	synced := ResourceStatus{Status: SyncStatusSynced}
	ignored := ResourceStatus{Status: SyncStatusOutOfSync, RequiresPruning: true, CountsAs: SyncStatusSynced}
	prohibited := ResourceStatus{Status: SyncStatusUnknown, CountsAs: SyncStatusOutOfSync}
	assert.Equal(t, SyncStatusSynced, RollUpSync([]ResourceStatus{synced, ignored}))
	assert.Equal(t, SyncStatusOutOfSync, RollUpSync([]ResourceStatus{synced, prohibited}))
	assert.Equal(t, SyncStatusUnknown, RollUpSync([]ResourceStatus{synced, {Status: SyncStatusUnknown}}))
}
