package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	_, err = loadCustomizations(writeCM(t, "  resource.exclusions: |\n    - kinds: [Event]\n"))
	assert.ErrorContains(t, err, "resource.exclusions and resource.inclusions are not applied by Ferry yet")

	_, err = loadCustomizations(writeCM(t, "  resource.customizations.health.example.com_A: 'if then'\n"))
	assert.ErrorContains(t, err, "Lua syntax")

	set, err = loadCustomizations(writeCM(t, "  resource.customizations.ignoreDifferences.all: |\n    jsonPointers: [/metadata/labels]\n"))
	require.NoError(t, err)
	assert.Len(t, set.IgnoreAll(), 1)
}
