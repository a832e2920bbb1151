package app

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResourceHealthIsArgoCDsShape: health is {status, message} in JSON,
// and the bare code of older states still reads.
func TestResourceHealthIsArgoCDsShape(t *testing.T) {
	r := ResourceStatus{ResourceKey: ResourceKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"},
		Region: "us-east-1", Status: SyncStatusSynced, Health: HealthDegraded, HealthMessage: `container "web": CrashLoopBackOff`}
	data, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"group":"apps","kind":"Deployment","namespace":"shop","name":"web","region":"us-east-1","status":"Synced",
		"health":{"status":"Degraded","message":"container \"web\": CrashLoopBackOff"}}`, string(data))
	var back ResourceStatus
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, r, back)

	var old ResourceStatus
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"ConfigMap","name":"c","region":"eu-west-1","status":"OutOfSync","health":"Missing","message":"missing"}`), &old))
	assert.Equal(t, ResourceStatus{ResourceKey: ResourceKey{Kind: "ConfigMap", Name: "c"}, Region: "eu-west-1",
		Status: SyncStatusOutOfSync, Health: HealthMissing, Message: "missing"}, old)

	data, err = json.Marshal(ResourceStatus{ResourceKey: ResourceKey{Kind: "ConfigMap", Name: "c"}, Status: SyncStatusSynced})
	require.NoError(t, err)
	assert.NotContains(t, string(data), "health", "no health, no field")
	assert.Error(t, json.Unmarshal([]byte(`{"kind":"ConfigMap","name":"c","health":7}`), &old))
}
