package app

import (
	"fmt"
	"time"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// Stages are the regions of a rollout, stage by stage: spec.syncPolicy.
// rollout.stages, or one stage of every region when the app has none.
func (a *Application) Stages(rc *regions.Config) []RolloutStage {
	if sp := a.Spec.SyncPolicy; sp != nil && sp.Rollout != nil && len(sp.Rollout.Stages) > 0 {
		return sp.Rollout.Stages
	}
	return []RolloutStage{{Regions: a.Regions(rc)}}
}

// SoakTime is the stage's soak; zero when unset or unreadable (Validate
// reports the latter).
func (s RolloutStage) SoakTime() time.Duration {
	d, err := time.ParseDuration(s.Soak)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// rollout checks that the stages name each destination region exactly once.
func (v *validator) rollout(a *Application) {
	sp := a.Spec.SyncPolicy
	if sp == nil || sp.Rollout == nil {
		return
	}
	if len(sp.Rollout.Stages) == 0 {
		v.add("spec.syncPolicy.rollout.stages", "empty: list stages of regions, e.g. [{regions: [us-east-1]}, {regions: [eu-west-1, ap-south-1]}], or remove rollout")
		return
	}
	dests := map[string]bool{}
	for _, r := range a.Regions(v.opts.Regions) {
		dests[r] = true
	}
	staged := map[string]bool{}
	for i, st := range sp.Rollout.Stages {
		p := fmt.Sprintf("spec.syncPolicy.rollout.stages[%d]", i)
		if len(st.Regions) == 0 {
			v.add(p+".regions", "empty: a stage lists at least one region")
		}
		for j, r := range st.Regions {
			switch {
			case !dests[r]:
				v.add(fmt.Sprintf("%s.regions[%d]", p, j), "region %q is not a destination of the app: stages list the regions of spec.destinations", r)
			case staged[r]:
				v.add(fmt.Sprintf("%s.regions[%d]", p, j), "region %q is in two stages: each region belongs to one stage", r)
			}
			staged[r] = true
		}
		if st.Soak != "" {
			if d, err := time.ParseDuration(st.Soak); err != nil || d < 0 {
				v.add(p+".soak", "%q is not a duration: write it like 30s or 5m", st.Soak)
			}
		}
	}
	for _, r := range a.Regions(v.opts.Regions) {
		if r != "" && !staged[r] {
			v.add("spec.syncPolicy.rollout.stages", "region %q is in no stage: add it to one, or it would never be synced", r)
		}
	}
}
