package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSyncBodyRefusesLocalManifests: argocd app sync --local's manifests
// are refused, never dropped for a sync of Git; a body without them is
// taken.
func TestSyncBodyRefusesLocalManifests(t *testing.T) {
	var body syncBody
	require.NoError(t, json.Unmarshal([]byte(`{"prune":true,"manifests":["{\"kind\":\"ConfigMap\"}"]}`), &body))
	err := body.refused("web")
	require.ErrorContains(t, err, `application "web": manifests (argocd app sync --local) are not taken by ferry-server`)
	require.ErrorContains(t, err, "ferry app sync web --local DIR")
	require.NotContains(t, err.Error(), "ConfigMap", "the error holds no manifest")

	var plain syncBody
	require.NoError(t, json.Unmarshal([]byte(`{"prune":true}`), &plain))
	require.NoError(t, plain.refused("web"))
}
