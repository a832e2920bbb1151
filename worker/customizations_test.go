package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/regions"
)

func writeCM(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "argocd-cm.yaml")
	require.NoError(t, os.WriteFile(p, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n"+data), 0o644))
	return p
}

func TestLoadCustomizationsRefusesWhatItCannotApply(t *testing.T) {
	set, err := loadCustomizations("")
	require.NoError(t, err)
	assert.Nil(t, set)

	_, err = loadCustomizations(writeCM(t, "  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jsonPointers: [spec/replicas]\n"))
	assert.ErrorContains(t, err, "resource.customizations.ignoreDifferences")

	set, err = loadCustomizations(writeCM(t, "  resource.exclusions: |\n    - kinds: [Secret]\n      clusters: ['https://*']\n"))
	require.NoError(t, err)
	rc, err := regions.New([]regions.Region{{Name: "eu", Server: "https://eu.example.com"}, {Name: "us"}})
	require.NoError(t, err)
	assert.True(t, excludedIn(set, "eu", rc)("", "Secret"), "the entry's cluster glob matches the region's server")
	assert.False(t, excludedIn(set, "us", rc)("", "Secret"), "a region without a server URL does not match https://*")
	assert.False(t, excludedIn(set, "eu", rc)("", "ConfigMap"))
	assert.Nil(t, excludedIn(nil, "eu", rc), "no file, no filter")

	_, err = loadCustomizations(writeCM(t, "  resource.customizations.health.example.com_A: 'if then'\n"))
	assert.ErrorContains(t, err, "Lua syntax")

	set, err = loadCustomizations(writeCM(t, "  resource.customizations.ignoreDifferences.all: |\n    jsonPointers: [/metadata/labels]\n"))
	require.NoError(t, err)
	assert.Len(t, set.IgnoreAll(), 1)
}
