package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSyncResourceAsArgoCD(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SyncResource
	}{
		{":ConfigMap:one", SyncResource{Kind: "ConfigMap", Name: "one"}},
		{"apps:Deployment:shop/web", SyncResource{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}},
		{"!:Service:*", SyncResource{Kind: "Service", Name: "*", Exclude: true}},
	} {
		got, err := ParseSyncResource(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.in, got.String())
	}
	for _, bad := range []string{"ConfigMap:one", "apps:Deployment:", "a:b:c:d", "apps:Deployment:shop/"} {
		_, err := ParseSyncResource(bad)
		assert.Error(t, err, bad)
	}
}

func TestSelectionSelects(t *testing.T) {
	one := ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "one"}
	two := ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "two"}
	web := ResourceKey{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	r := func(s string) SyncResource { x, err := ParseSyncResource(s); require.NoError(t, err); return x }
	sel := Selection{Resources: []SyncResource{r(":ConfigMap:one")}}
	assert.True(t, sel.Selects(one, nil))
	assert.False(t, sel.Selects(two, nil))
	assert.False(t, sel.Selects(web, nil))
	assert.True(t, Selection{Resources: []SyncResource{r(":ConfigMap:ns/one")}}.Selects(one, nil))
	assert.False(t, Selection{Resources: []SyncResource{r(":ConfigMap:other/one")}}.Selects(one, nil))
	glob := Selection{Resources: []SyncResource{r(":ConfigMap:*"), r("!:ConfigMap:two")}}
	assert.True(t, glob.Selects(one, nil))
	assert.False(t, glob.Selects(two, nil), "an exclusion wins")
	assert.True(t, Selection{Resources: []SyncResource{r("!:ConfigMap:two")}}.Selects(web, nil), "only exclusions: the rest is in")
	byLabel := Selection{Labels: []string{"tier=web"}}
	assert.True(t, byLabel.Selects(web, map[string]string{"tier": "web", "x": "y"}))
	assert.False(t, byLabel.Selects(one, map[string]string{"tier": "db"}))
	assert.True(t, Selection{}.Empty())
	assert.Error(t, Selection{Labels: []string{"novalue", "=x"}}.Validate())
}
