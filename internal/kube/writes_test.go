package kube

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestWriteLogSweepsOncePerPeriod: the writes older than writeMemory are
// dropped by a pass over the log at most once per sweepEvery, not on
// every write; an old write is never taken as current meanwhile.
func TestWriteLogSweepsOncePerPeriod(t *testing.T) {
	w := newWriteLog()
	old := time.Now().Add(-writeMemory - time.Minute)
	key := func(i int) app.ResourceKey {
		return app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprintf("cm-%d", i)}
	}
	for i := range 5000 {
		w.written[identity(key(i))] = writeEntry{rv: 7, at: old}
	}
	obj := &unstructured.Unstructured{}
	obj.SetResourceVersion("10")

	w.wrote(key(-1), obj)
	assert.Len(t, w.written, 1, "the first write past 4096 entries sweeps the old ones")

	for i := range 5000 {
		w.written[identity(key(i))] = writeEntry{rv: 7, at: old}
	}
	w.wrote(key(-2), obj)
	assert.Len(t, w.written, 5002, "a write within sweepEvery of the last sweep passes over nothing")
	assert.True(t, w.current(key(3), "1"), "a write older than writeMemory is forgotten, swept or not")

	w.swept = w.swept.Add(-sweepEvery)
	w.wrote(key(-3), obj)
	assert.Len(t, w.written, 3, "once sweepEvery has passed, the next write sweeps")
	assert.False(t, w.current(key(-3), "9"), "a fresh write is remembered")
}
