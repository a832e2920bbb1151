package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The adopted objects carry the tracking annotation Argo CD 3 writes on
// a sync (its default, annotation tracking): app, group, kind, namespace
// and name, with an empty group for the core kinds.
func TestArgoTrackedAnnotatesAsArgoCDSyncs(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	for p, body := range resourceFiles("", 3, 0) {
		require.NoError(t, os.WriteFile(filepath.Join(src, p), []byte(body), 0o644))
	}
	require.NoError(t, argoTracked("argocd-app-0007", "argocd-app-0007", src, dst))

	got := map[string]string{}
	files, err := filepath.Glob(filepath.Join(dst, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var obj struct {
			Kind     string
			Metadata struct {
				Name        string
				Annotations map[string]string
			}
		}
		require.NoError(t, json.Unmarshal(raw, &obj))
		got[obj.Kind+"/"+obj.Metadata.Name] = obj.Metadata.Annotations[argoTrackingAnnotation]
	}
	assert.Equal(t, map[string]string{
		"Deployment/web-000": "argocd-app-0007:apps/Deployment:argocd-app-0007/web-000",
		"Service/web-000":    "argocd-app-0007:/Service:argocd-app-0007/web-000",
		"ConfigMap/r0002":    "argocd-app-0007:/ConfigMap:argocd-app-0007/r0002",
	}, got)

	assert.ErrorContains(t, argoTracked("a", "a", t.TempDir(), dst), "no manifests")
}
