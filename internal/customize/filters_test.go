package customize

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestResourceFilterAsArgoCD follows Argo CD's table of inclusions and
// exclusions, and its cluster globs, which cross the slashes of a URL.
func TestResourceFilterAsArgoCD(t *testing.T) {
	s := setOf(t, map[string]string{
		"resource.exclusions": `
- apiGroups: ["*.example.com"]
  kinds: ["*"]
  clusters: ["https://*.prod.example.com"]
- apiGroups: [""]
  kinds: [Secret]
`,
		"resource.inclusions": `
- apiGroups: ["", apps, "*.example.com"]
`,
	})
	tests := []struct {
		group, kind string
		cluster     []string
		excluded    bool
	}{
		{"", "ConfigMap", []string{"eu-west-1"}, false},
		{"", "Secret", []string{"eu-west-1"}, true},                                                    // excluded wherever
		{"widgets.example.com", "Widget", []string{"eu-west-1"}, false},                                // the entry's clusters do not match
		{"widgets.example.com", "Widget", []string{"eu-west-1", "https://api.prod.example.com"}, true}, // its server does
		{"widgets.example.com", "Widget", nil, false},
		{"batch", "Job", []string{"eu-west-1"}, true}, // not included
		{"apps", "Deployment", []string{"eu-west-1"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.excluded, s.Excluded(tt.group, tt.kind, tt.cluster...), "%s/%s in %v", tt.group, tt.kind, tt.cluster)
	}
	_, err := FromData(map[string]string{"resource.inclusions": "- kinds: ['[']\n"})
	assert.ErrorContains(t, err, `data["resource.inclusions"]: entry 0: pattern "["`)
}
