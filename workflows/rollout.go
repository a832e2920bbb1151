package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/app"
)

// syncStages syncs the app's regions: all at once, or stage by stage when
// the app has a rollout. A stage must end Synced and Healthy, and stay so
// for its soak time, before the next starts; otherwise the rollout halts and
// the later stages keep what they run.
func (s *appState) syncStages(ctx workflow.Context, op *operation) ([]app.ResourceResult, error) {
	stages := s.app.Stages(s.cfg.Regions)
	if !s.rollsOut() {
		return s.syncRegions(ctx, op, op.params, s.destinations(), true)
	}
	target, p := op.target, op.params
	ro := &app.RolloutStatus{Revision: target.Commit(), Stages: len(stages), Phase: app.RolloutProgressing}
	p.staged = true
	s.Status.Rollout = ro
	var all []app.ResourceResult
	for i, stage := range stages {
		ro.Stage, ro.Phase = i+1, app.RolloutProgressing
		p.stage = fmt.Sprintf("stage %d/%d", i+1, len(stages))
		ro.Message = "syncing " + strings.Join(stage.Regions, ", ")
		op.state.Message = fmt.Sprintf("rollout stage %d/%d: %s", i+1, len(stages), ro.Message)
		s.publish(ctx)
		results, err := s.syncRegions(ctx, op, p, s.destinationsIn(stage.Regions), i == 0)
		all = append(all, results...)
		if err == nil && !p.dryRun {
			err = s.stageSettled(stage.Regions)
		}
		if err == nil && !p.dryRun && stage.SoakTime() > 0 && i < len(stages)-1 {
			ro.Phase, ro.Message = app.RolloutSoaking, fmt.Sprintf("soaking %s for %s", strings.Join(stage.Regions, ", "), stage.SoakTime())
			s.publish(ctx)
			soak := workflow.NewTimerWithOptions(ctx, stage.SoakTime(), workflow.TimerOptions{Summary: soakSummary(stage.Regions)})
			if err = soak.Get(ctx, nil); err == nil {
				s.compareRegions(ctx, target, s.destinationsIn(stage.Regions))
				err = s.stageSettled(stage.Regions)
			}
		}
		if err != nil {
			ro.Phase = app.RolloutHalted
			ro.Message = fmt.Sprintf("halted at stage %d/%d (%s): %s; later stages keep their revision: a retry or a new commit resumes",
				i+1, len(stages), strings.Join(stage.Regions, ", "), err)
			return all, err
		}
	}
	ro.Phase, ro.Message = app.RolloutCompleted, fmt.Sprintf("all %d stages Synced and Healthy", len(stages))
	return all, nil
}

// rollsOut reports whether the app syncs its regions stage by stage.
func (s *appState) rollsOut() bool {
	return len(s.app.Stages(s.cfg.Regions)) > 1 || s.app.Spec.SyncPolicy != nil && s.app.Spec.SyncPolicy.Rollout != nil
}

// stageSettled is nil when every region of the stage is Synced and Healthy.
func (s *appState) stageSettled(regions []string) error {
	var bad []string
	for _, r := range regions {
		sum := s.Status.Regions[r]
		if sum.Sync != app.SyncStatusSynced || sum.Health != app.HealthHealthy {
			bad = append(bad, fmt.Sprintf("%s is %s and %s", r, sum.Sync, sum.Health))
		}
	}
	if len(bad) > 0 {
		return &syncError{msg: strings.Join(bad, "; ")}
	}
	return nil
}

func (s *appState) destinationsIn(regions []string) []app.Target {
	var out []app.Target
	for _, d := range s.destinations() {
		if slices.Contains(regions, d.Region) {
			out = append(out, d)
		}
	}
	return out
}
