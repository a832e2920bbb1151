package workflows

import (
	"encoding/json"
	"reflect"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// versionRecordRegions records the worker's regions configuration in the
// run's history, as MaxReconciles is: a run then replays with the regions
// it ran with, whatever the worker that replays it was started with.
const versionRecordRegions = "record-regions-config"

// recordRegions takes the worker's regions configuration into the run. The
// first call of a run decides (GetVersion) whether the run records it;
// every call records it again when the worker's differs from the one
// recorded (MutableSideEffect: no event while it stays the same), so that
// a changed configuration reaches a running app at its next step, not at
// its next continue-as-new.
func (s *appState) recordRegions(ctx workflow.Context) {
	if s.regionsVersion == nil {
		v := changeVersion(ctx, versionRecordRegions)
		s.regionsVersion = &v
	}
	if *s.regionsVersion == workflow.DefaultVersion {
		return
	}
	worker := s.workerRegions
	var snap regions.Snapshot
	err := workflow.MutableSideEffect(ctx, "regions-config", func(workflow.Context) any { return worker.Snapshot() }, sameJSON).Get(&snap)
	if err != nil {
		workflow.GetLogger(ctx).Error("read the recorded regions configuration", "error", err)
		return
	}
	cfg, err := snap.Config()
	if err != nil {
		// It was a valid configuration when it was taken.
		workflow.GetLogger(ctx).Error("the recorded regions configuration", "error", err)
		return
	}
	s.cfg.Regions = cfg
}

// sameJSON compares two values as their JSON: a value and its decoded
// recording are equal when they encode alike.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && reflect.DeepEqual(ja, jb)
}
