package kube_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestStatesShowEverySideSecretsMasked: States gives each desired object
// as Git wants it, as it runs and both sides of the comparison, and a
// tracked object no longer desired as it runs; a Secret's values are
// masked in every side, its last applied copy dropped.
func TestStatesShowEverySideSecretsMasked(t *testing.T) {
	e := newEnv(t)
	secret := func(password string) *unstructured.Unstructured {
		return decode(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\""+
			password+"\"}}'}}\nstringData: {user: admin, password: "+password+"}\n")
	}
	cs, err := e.apply([]*unstructured.Unstructured{secret("hunter2"), configMap("same", nil, nil), configMap("gone", nil, nil)}, nil)
	require.NoError(t, err)
	desired := []*unstructured.Unstructured{secret("swordfish"), configMap("same", nil, nil), configMap("fresh", map[string]string{"tier": "web"}, nil)}
	states, err := e.cluster.States(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: desired, Inventory: keys(cs)})
	require.NoError(t, err)
	byName := map[string]kube.ObjectStates{}
	for _, s := range states {
		byName[s.Key.Name] = s
	}
	require.Len(t, byName, 4, "three desired, one no longer desired")

	creds := byName["creds"]
	assert.True(t, creds.Modified)
	raw, err := json.Marshal(creds)
	require.NoError(t, err)
	for _, v := range []string{"hunter2", "swordfish", "aHVudGVyMg", "c3dvcmRmaXNo", "YWRtaW4", "last-applied"} {
		assert.NotContains(t, string(raw), v)
	}
	for _, side := range []map[string]any{creds.Live, creds.NormalizedLive, creds.Predicted} {
		require.NotNil(t, side)
		pw, _, _ := unstructured.NestedString(side, "data", "password")
		assert.Regexp(t, `^\++$`, pw)
	}
	livePW, _, _ := unstructured.NestedString(creds.NormalizedLive, "data", "password")
	predictedPW, _, _ := unstructured.NestedString(creds.Predicted, "data", "password")
	assert.NotEqual(t, livePW, predictedPW, "a changed value gets another mask")

	same := byName["same"]
	assert.False(t, same.Modified, same.Message)
	assert.NotNil(t, same.Target)
	assert.NotNil(t, same.Live)
	_, hasMF, _ := unstructured.NestedFieldNoCopy(same.Live, "metadata", "managedFields")
	assert.False(t, hasMF, "no managedFields in the live state")

	fresh := byName["fresh"]
	assert.True(t, fresh.Modified)
	assert.Nil(t, fresh.Live)
	assert.Equal(t, "missing", fresh.Message)

	gone := byName["gone"]
	assert.True(t, gone.Modified)
	assert.Nil(t, gone.Target)
	assert.NotNil(t, gone.Live)
	assert.Contains(t, gone.Message, "no longer desired")
}
