package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ferry-gitops/ferry/contract"
)

// TestViewCache: a list reuses an app's view only while its search
// attributes are unchanged, no operation runs, the server did not change
// it, and the view is young.
func TestViewCache(t *testing.T) {
	var c viewCache
	v := &contract.View{}
	synced := contract.Summary{Sync: "Synced", Health: "Healthy", Revision: "abc", Operation: "Succeeded"}
	c.put("web", synced, v)
	assert.Same(t, v, c.get("web", synced), "unchanged attributes: the cached view")

	moved := synced
	moved.Sync = "OutOfSync"
	assert.Nil(t, c.get("web", moved), "moved attributes: queried again")
	running := synced
	running.Operation = "Running"
	c.put("web", running, v)
	assert.Nil(t, c.get("web", running), "a running operation: queried again")

	c.put("web", synced, v)
	c.forget("web")
	assert.Nil(t, c.get("web", synced), "after the server changed it: queried again")

	c.put("web", synced, v)
	c.m["web"] = cachedView{v: v, sum: synced, at: time.Now().Add(-viewMaxAge - time.Second)}
	assert.Nil(t, c.get("web", synced), "an old view: queried again")
	c.swept = time.Time{} // the sweep runs once per viewMaxAge
	c.put("other", synced, v)
	assert.NotContains(t, c.m, "web", "old views are dropped, those of deleted apps too")
}
