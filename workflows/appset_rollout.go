package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// progress advances the rollout after a reconcile that produced res from
// the generated apps gen.
func (s *appSetState) progress(ctx workflow.Context, gen []app.Application, res contract.ReconcileResult) {
	if !s.set.RollingSync() {
		if len(s.Status.ApplicationStatus) > 0 { // no longer RollingSync
			s.Status.ApplicationStatus, s.rolling = nil, false
			s.Status.Conditions = slices.DeleteFunc(s.Status.Conditions, func(c contract.AppSetCondition) bool { return c.Type == contract.AppSetRolloutProgressing })
		}
		return
	}
	// After the reconcile: a comparison the app reports from a later time
	// saw the spec the set gave it.
	now := workflow.Now(ctx)
	generated := map[string]*app.Application{}
	for i := range gen {
		generated[gen[i].Metadata.Name] = &gen[i]
	}
	var apps []appset.RolloutApp
	for _, r := range res.Apps {
		g := generated[r.Name]
		if g == nil || !slices.Contains(res.Owned, r.Name) {
			continue // no longer generated, or not the set's
		}
		apps = append(apps, appset.RolloutApp{
			Name: r.Name, Labels: g.Metadata.Labels, Changed: r.Action == contract.AppCreated || r.Action == contract.AppUpdated,
			Sync: r.Sync, Health: r.Health, Revision: r.Revision, ReconciledAt: r.ReconciledAt,
			OpStartedAt: r.OpStartedAt, OpPhase: r.OpPhase, OpMessage: r.OpMessage,
		})
	}
	ro := s.set.Progress(apps, s.Status.ApplicationStatus, now)
	s.Status.ApplicationStatus = ro.Statuses
	s.rolling = ro.Comparing
	var syncs []contract.AppSetSyncOf
	for i, st := range ro.Statuses {
		switch {
		case st.Status == appset.ProgressivePending:
			syncs = append(syncs, contract.AppSetSyncOf{Name: st.Application, Prune: s.set.RolloutPrune(generated[st.Application]), Since: *st.LastTransitionTime})
			s.rolling = true
		case st.Status == appset.ProgressiveProgressing && apps[i].OpPhase != app.OperationFailed && apps[i].OpPhase != app.OperationError:
			s.rolling = true
		}
	}
	if ro.Progressing {
		s.setCondition(now, contract.AppSetRolloutProgressing, "True", "ApplicationSetModified", ro.Message)
	} else {
		s.setCondition(now, contract.AppSetRolloutProgressing, "False", "ApplicationSetRolloutComplete", ro.Message)
	}
	if len(syncs) == 0 {
		return
	}
	var sr contract.SyncAppSetAppsResult
	err := workflow.ExecuteActivity(appSetActivityCtx(ctx, "Sync the Pending apps of applicationset "+s.set.Metadata.Name),
		contract.ActivitySyncAppSetApps, contract.SyncAppSetAppsInput{Set: s.set.Metadata.Name, Apps: syncs}).Get(ctx, &sr)
	if err != nil {
		sr.Refused = nil
		for _, sy := range syncs {
			sr.Refused = append(sr.Refused, contract.AppSetApp{Name: sy.Name, Message: contract.ErrorMessage(err)})
		}
	}
	for _, r := range sr.Refused {
		for i := range s.Status.ApplicationStatus {
			if st := &s.Status.ApplicationStatus[i]; st.Application == r.Name {
				st.Message = "Application is Pending, but its sync could not start (the set tries again): " + r.Message
			}
		}
	}
}
