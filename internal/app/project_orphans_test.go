package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProjectOrphanedResources(t *testing.T) {
	p, err := ParseProject([]byte(`
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-o}
spec:
  sourceRepos: ['*']
  destinations: [{name: '*', namespace: '*'}]
  namespaceResourceBlacklist: [{group: "", kind: ResourceQuota}]
  orphanedResources:
    ignore:
    - {kind: ConfigMap, name: "cache-*"}
    - {group: "*.example.com"}
`))
	require.NoError(t, err)
	require.NoError(t, ValidateProject(p))
	require.NotNil(t, p.Spec.OrphanedResources)
	assert.True(t, p.Spec.OrphanedResources.IsWarn(), "warn left out is true, as in Argo CD")
	tests := []struct {
		key     ResourceKey
		ignored bool
	}{
		{ResourceKey{Kind: "ConfigMap", Namespace: "a", Name: "stray"}, false},
		{ResourceKey{Kind: "ConfigMap", Namespace: "a", Name: "cache-1"}, true},
		{ResourceKey{Kind: "ConfigMap", Namespace: "a", Name: "kube-root-ca.crt"}, true},
		{ResourceKey{Kind: "ServiceAccount", Namespace: "a", Name: "default"}, true},
		{ResourceKey{Kind: "Service", Namespace: "default", Name: "kubernetes"}, true},
		{ResourceKey{Kind: "Service", Namespace: "a", Name: "kubernetes"}, false},
		{ResourceKey{Kind: "ResourceQuota", Namespace: "a", Name: "q"}, true}, // denied by the project
		{ResourceKey{Group: "widgets.example.com", Kind: "Widget", Namespace: "a", Name: "w"}, true},
		{ResourceKey{Group: "apps", Kind: "ConfigMap", Namespace: "a", Name: "cache-1"}, false}, // the ignore's empty group is the core group
	}
	for _, tt := range tests {
		assert.Equal(t, tt.ignored, p.IgnoresOrphan(tt.key), "%+v", tt.key)
	}
	off := false
	assert.False(t, (&OrphanedResources{Warn: &off}).IsWarn())
	assert.False(t, (*OrphanedResources)(nil).IsWarn())
	assert.Equal(t, "Application has 2 orphaned resources", OrphanWarning(2))

	p.Spec.OrphanedResources.Ignore = append(p.Spec.OrphanedResources.Ignore, OrphanedResourceKey{Name: "[x"})
	assert.ErrorContains(t, ValidateProject(p), "spec.orphanedResources.ignore[2].name")
}
