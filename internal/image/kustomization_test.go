package image

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestPinDigest: the overlay renders the image by digest, its other
// entries and comments stay, and a file without the entry is refused.
func TestPinDigest(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "kustomization.yaml")
	require.NoError(t, os.WriteFile(k, []byte(`# my overlay
resources:
  - pod.yaml
images:
  - name: other
    newTag: "1"
  - name: ferry-worker
    newName: registry.example.com/ferry/ferry-worker # where I copy it
    newTag: v0.1.0
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - {name: w, image: ferry-worker}
    - {name: o, image: other}
`), 0o644))
	digest := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	require.NoError(t, PinDigest(k, "ferry-worker", digest))
	out, err := os.ReadFile(k)
	require.NoError(t, err)
	assert.Contains(t, string(out), "# my overlay")
	assert.Contains(t, string(out), "# where I copy it")
	assert.NotContains(t, string(out), "v0.1.0")
	assert.Contains(t, string(out), "\n  - name: ferry-worker\n", "the file's own indentation")

	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err)
	pod := res.Resources()[0]
	images, err := pod.GetSlice("spec.containers")
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com/ferry/ferry-worker@"+digest, images[0].(map[string]any)["image"])
	assert.Equal(t, "other:1", images[1].(map[string]any)["image"])

	err = PinDigest(k, "ferry", digest)
	assert.ErrorContains(t, err, "images: has no entry named ferry")
}
