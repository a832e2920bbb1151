package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestSyncHooksRunBetweenWaves: the Sync hooks of a wave run once its
// objects are applied, a wave of hooks alone included; a failed hook stops
// the sync there, and the change set still holds every outcome so far.
func TestSyncHooksRunBetweenWaves(t *testing.T) {
	e := newEnv(t)
	wave := func(name, w string) *unstructured.Unstructured {
		return configMap(name, nil, map[string]string{"argocd.argoproj.io/sync-wave": w})
	}
	objs := []*unstructured.Unstructured{wave("w0", "0"), wave("w2", "2"), wave("w3", "3")}
	var seen []string
	hooks := &kube.SyncHooks{Waves: []int{0, 1, 2}, Run: func(ctx context.Context, w int) ([]kube.Change, error) {
		var present []string
		for _, name := range []string{"w0", "w2", "w3"} {
			if e.exists(configMaps, name) {
				present = append(present, name)
			}
		}
		seen = append(seen, string(rune('0'+w))+":"+strings.Join(present, ","))
		key := app.ResourceKey{Kind: "Job", Namespace: e.ns, Name: "hook-" + string(rune('0'+w))}
		if w == 2 {
			return []kube.Change{{Key: key, Action: kube.ActionFailed, Message: "BackoffLimitExceeded"}}, errors.New("Sync hook failed")
		}
		return []kube.Change{{Key: key, Action: kube.ActionCreated, Message: "Succeeded"}}, nil
	}}
	cs, err := e.apply(objs, func(r *kube.ApplyRequest) { r.SyncHooks = hooks })
	require.EqualError(t, err, "Sync hook failed")
	assert.Equal(t, []string{"0:w0", "1:w0", "2:w0,w2"}, seen, "each wave's hooks run once its objects are applied")
	assert.Equal(t, map[string]string{"ConfigMap/w0": "created", "ConfigMap/w2": "created",
		"Job/hook-0": "created", "Job/hook-1": "created", "Job/hook-2": "failed"}, actions(cs))
	for _, c := range cs.Entries {
		if c.Key.Kind == "Job" {
			assert.Equal(t, string(rune('0'+c.Wave)), c.Key.Name[len(c.Key.Name)-1:], "a hook's change names its wave")
		}
	}
	assert.False(t, e.exists(configMaps, "w3"), "no wave after a failed hook")
}

// TestTheLastWaveIsNotWaitedFor: the sync ends once its last wave is
// applied, as Argo CD's operation does; WaitLast waits for it as for any
// other wave, and a Degraded object's change says why.
func TestTheLastWaveIsNotWaitedFor(t *testing.T) {
	e := newEnv(t)
	failing := decode(t, `
apiVersion: v1
kind: Pod
metadata: {name: failing-last, labels: {ferry.dev/fail: "true"}}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
`)
	cs, err := e.apply([]*unstructured.Unstructured{failing}, nil)
	require.NoError(t, err, "the last wave is applied, not waited for")
	assert.Equal(t, map[string]string{"Pod/failing-last": "created"}, actions(cs))

	cs, err = e.apply([]*unstructured.Unstructured{failing}, func(r *kube.ApplyRequest) { r.WaitLast, r.WaveTimeout = true, time.Minute })
	require.Error(t, err)
	assert.True(t, kube.IsUnhealthy(err), "%v", err)
	require.Len(t, cs.Entries, 1)
	assert.Contains(t, cs.Entries[0].Message, "then Degraded", "the change says why the wave failed")
}
