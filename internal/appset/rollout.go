package appset

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Strategy types, as Argo CD names them.
const (
	StrategyAllAtOnce   = "AllAtOnce"
	StrategyRollingSync = "RollingSync"
)

// Progressive sync statuses of an app in status.applicationStatus, as
// Argo CD's: Waiting (changes pending, its step not reached), Pending
// (selected to sync; the set starts its sync), Progressing (its sync
// started; not yet Synced and Healthy), Healthy (done for this change).
const (
	ProgressiveWaiting     = "Waiting"
	ProgressivePending     = "Pending"
	ProgressiveProgressing = "Progressing"
	ProgressiveHealthy     = "Healthy"
)

// ApplicationStatus is one app of a RollingSync set, as Argo CD's
// status.applicationStatus entry.
type ApplicationStatus struct {
	Application string `json:"application"`
	Message     string `json:"message"`
	Status      string `json:"status"`
	// Step is the 1-based step that selects the app, "-1" for none.
	Step               string     `json:"step"`
	TargetRevisions    []string   `json:"targetRevisions,omitempty"`
	LastTransitionTime *time.Time `json:"lastTransitionTime,omitempty"`
}

// RolloutApp is what a rollout needs to know of one app the set owns.
type RolloutApp struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Changed: the set created the app or changed its spec this time.
	Changed bool                 `json:"changed,omitempty"`
	Sync    app.SyncStatusCode   `json:"sync,omitempty"`
	Health  app.HealthStatusCode `json:"health,omitempty"`
	// Revision is the commit the app last compared with.
	Revision     string     `json:"revision,omitempty"`
	ReconciledAt *time.Time `json:"reconciledAt,omitempty"`
	// The app's last operation: when it started, its phase and message.
	OpStartedAt *time.Time         `json:"opStartedAt,omitempty"`
	OpPhase     app.OperationPhase `json:"opPhase,omitempty"`
	OpMessage   string             `json:"opMessage,omitempty"`
}

// RollingSync reports whether the set syncs its apps step by step.
func (s *ApplicationSet) RollingSync() bool {
	st := s.Spec.Strategy
	return st != nil && st.Type == StrategyRollingSync && st.RollingSync != nil && len(st.RollingSync.Steps) > 0
}

// disableAutoSync turns automated sync off on an app of a RollingSync set,
// as Argo CD does: the set starts its syncs. The section stays, so that its
// prune still says how the set syncs it.
func disableAutoSync(a *app.Application) {
	if sp := a.Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		sp.Automated.Enabled = new(false)
	}
}

// RolloutPrune tells whether the set's sync of a prunes: the app's
// automated.prune where it has the section, else rollingSync.defaultPrune.
func (s *ApplicationSet) RolloutPrune(a *app.Application) bool {
	if sp := a.Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		return sp.Automated.Prune
	}
	return s.RollingSync() && s.Spec.Strategy.RollingSync.DefaultPrune
}

// StepOf is the 0-based step that selects an app by its labels, -1 for
// none: the first step all of whose expressions hold. In holds when the
// label is present with one of the values; NotIn when it is absent or has
// none of them, as in Argo CD.
func (s *ApplicationSet) StepOf(labels map[string]string) int {
	if !s.RollingSync() {
		return -1
	}
	for i, step := range s.Spec.Strategy.RollingSync.Steps {
		selected := true
		for _, e := range step.MatchExpressions {
			v, ok := labels[e.Key]
			switch {
			case e.Operator == "In":
				selected = ok && slices.Contains(e.Values, v)
			case e.Operator == "NotIn":
				selected = !ok || !slices.Contains(e.Values, v)
			}
			if !selected {
				break
			}
		}
		if selected {
			return i
		}
	}
	return -1
}

// maxUpdate is how many apps of a step of total may be Pending or
// Progressing at once: unbounded without maxUpdate; a percentage rounds
// down, but at least 1 unless it is 0%, as in Argo CD.
func maxUpdate(m *intstr.IntOrString, total int) int {
	if m == nil {
		return math.MaxInt
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(m, total, false)
	if err != nil {
		return math.MaxInt // refused by validation
	}
	if m.Type == intstr.String && m.StrVal != "0%" && v < 1 {
		v = 1
	}
	return v
}

func validMaxUpdate(m *intstr.IntOrString) bool {
	if m == nil {
		return true
	}
	if m.Type == intstr.Int {
		return m.IntVal >= 0
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(m.StrVal, "%"))
	return err == nil && strings.HasSuffix(m.StrVal, "%") && pct >= 0 && pct <= 100
}

// Rollout is the outcome of one look at a RollingSync set's apps.
type Rollout struct {
	// Statuses are the apps' progressive sync statuses, in app order.
	Statuses []ApplicationStatus
	// Sync are the apps that just became Pending: the set syncs them now.
	Sync []string
	// Progressing says the rollout is not complete; Message names the step
	// it is at and, when it is held up, the app and why.
	Progressing bool
	Message     string
	// Comparing: the rollout waits for the apps to compare a change.
	Comparing bool
}

// Progress moves each app of a RollingSync set along Waiting → Pending →
// Progressing → Healthy, as Argo CD's progressive sync does, from the
// statuses of the last look (prev) and the apps as they are now:
//   - an app the set created or changed, or whose revision moved, waits;
//     one that is Synced and Healthy at once (nothing to sync) is Healthy;
//   - the apps of a step become Pending once every app of every earlier
//     step is Healthy, at most maxUpdate of the step at once;
//   - a Pending app is Progressing once a sync started after it became
//     Pending, and Healthy once it is Synced and Healthy.
//
// A sync that fails leaves its app Progressing, which halts the rollout at
// its step until a new commit or spec moves the app again. Apps no step
// selects are left out of the rollout (synced by hand), as in Argo CD.
func (s *ApplicationSet) Progress(apps []RolloutApp, prev []ApplicationStatus, now time.Time) Rollout {
	steps := s.Spec.Strategy.RollingSync.Steps
	byName := map[string]ApplicationStatus{}
	for _, st := range prev {
		byName[st.Application] = st
	}
	stepOf := make([]int, len(apps))
	out := Rollout{}
	since := latestPendingChange(prev)
	for i, a := range apps {
		stepOf[i] = s.StepOf(a.Labels)
		out.Statuses = append(out.Statuses, advance(a, byName, stepOf[i], now))
	}
	if since == nil {
		since = latestPendingChange(out.Statuses)
	}
	// A change waits until every app compared after it, so that an app
	// not yet aware of a new commit does not count as Healthy for it.
	reconciled := true
	for _, a := range apps {
		if since != nil && !after(a.ReconciledAt, *since) {
			reconciled = false
		}
	}
	out.Comparing = !reconciled
	// The steps whose apps may sync: each up to the first not yet Healthy.
	open := 0
	for open < len(steps) {
		done := true
		for i := range apps {
			if stepOf[i] == open && out.Statuses[i].Status != ProgressiveHealthy {
				done = false
			}
		}
		if !done {
			break
		}
		open++
	}
	for step := 0; reconciled && step <= open && step < len(steps); step++ {
		total, updating := 0, 0
		for i := range apps {
			if stepOf[i] == step {
				total++
				if st := out.Statuses[i].Status; st == ProgressivePending || st == ProgressiveProgressing {
					updating++
				}
			}
		}
		limit := maxUpdate(steps[step].MaxUpdate, total)
		for i := range apps {
			st := &out.Statuses[i]
			if stepOf[i] != step || st.Status != ProgressiveWaiting || updating >= limit {
				continue
			}
			st.Status, st.LastTransitionTime = ProgressivePending, &now
			st.Message = "Application moved to Pending status, watching for the Application resource to start Progressing"
			out.Sync = append(out.Sync, st.Application)
			updating++
		}
	}
	if open < len(steps) {
		out.Progressing = true
		out.Message = fmt.Sprintf("ApplicationSet is performing rollout of step %d", open+1)
		if held := heldUp(apps, out.Statuses, stepOf, open); held != "" {
			out.Message += ": " + held
		}
	} else {
		out.Message = "ApplicationSet Rollout has completed"
	}
	return out
}

// advance is one app's status now, before the steps are opened.
func advance(a RolloutApp, prev map[string]ApplicationStatus, step int, now time.Time) ApplicationStatus {
	cur, known := prev[a.Name]
	next := cur
	next.Application, next.Step = a.Name, strconv.Itoa(step+1)
	if step < 0 {
		next.Step = "-1"
	}
	revs := []string{a.Revision}
	if a.Revision == "" {
		revs = nil
	}
	// A revision first seen is no change: a new app compares for the
	// first time.
	moved := len(cur.TargetRevisions) > 0 && len(revs) > 0 && !slices.Equal(cur.TargetRevisions, revs)
	if len(cur.TargetRevisions) == 0 {
		next.TargetRevisions = revs
	}
	switch {
	case !known:
		next = ApplicationStatus{Application: a.Name, Step: next.Step, TargetRevisions: revs, Status: ProgressiveWaiting,
			Message: "No Application status found, defaulting status to Waiting", LastTransitionTime: &now}
	case moved || a.Changed:
		next.TargetRevisions, next.Status, next.LastTransitionTime = revs, ProgressiveWaiting, &now
		switch {
		case moved && a.Changed:
			next.Message = "Application has pending changes (revision and spec differ), setting status to Waiting"
		case moved:
			next.Message = "Application has pending changes, setting status to Waiting"
		default:
			next.Message = "Application has pending changes (spec differs), setting status to Waiting"
		}
	}
	switch next.Status {
	case ProgressiveWaiting:
		// Only a comparison made after the app began waiting tells whether
		// it has anything to sync.
		if next.LastTransitionTime != nil && after(a.ReconciledAt, *next.LastTransitionTime) && a.Sync == app.SyncStatusSynced && !a.Changed {
			next.LastTransitionTime = &now
			if a.Health == app.HealthHealthy {
				next.Status, next.Message = ProgressiveHealthy, "Application resource has synced, updating status to Healthy"
			} else {
				next.Status, next.Message = ProgressiveProgressing, "Application resource has synced, updating status to Progressing"
			}
		}
	case ProgressivePending:
		if cur.LastTransitionTime != nil && after(a.OpStartedAt, *cur.LastTransitionTime) {
			next.Status, next.LastTransitionTime = ProgressiveProgressing, &now
			switch a.OpPhase {
			case app.OperationSucceeded:
				next.Message = "Application resource completed a sync successfully, updating status from Pending to Progressing"
			case app.OperationRunning:
				next.Message = "Application resource became Progressing, updating status from Pending to Progressing"
			default:
				next.Message = "Application resource completed a sync, updating status from Pending to Progressing"
			}
		}
	}
	if next.Status == ProgressiveProgressing {
		switch {
		case a.Sync == app.SyncStatusSynced && a.Health == app.HealthHealthy && a.OpPhase != app.OperationRunning:
			next.Status, next.LastTransitionTime = ProgressiveHealthy, &now
			next.Message = "Application resource became Healthy, updating status from Progressing to Healthy"
		case failedOp(a.OpPhase):
			next.Message = fmt.Sprintf("Application sync %s, the rollout waits for a fix: %s", a.OpPhase, a.OpMessage)
		}
	}
	return next
}

// latestPendingChange is the latest time an app began waiting on a change
// (not as a new app), nil for none.
func latestPendingChange(statuses []ApplicationStatus) *time.Time {
	var latest *time.Time
	for _, st := range statuses {
		if st.Status == ProgressiveWaiting && st.LastTransitionTime != nil && strings.HasPrefix(st.Message, "Application has pending changes") &&
			(latest == nil || st.LastTransitionTime.After(*latest)) {
			latest = st.LastTransitionTime
		}
	}
	return latest
}

func failedOp(p app.OperationPhase) bool {
	return p == app.OperationFailed || p == app.OperationError
}

// heldUp names the app the open step waits on, and why, when one is not
// merely on its way: its sync failed, or it is not healthy after it.
func heldUp(apps []RolloutApp, statuses []ApplicationStatus, stepOf []int, step int) string {
	for i, a := range apps {
		if stepOf[i] != step || statuses[i].Status != ProgressiveProgressing {
			continue
		}
		switch {
		case failedOp(a.OpPhase):
			return fmt.Sprintf("app %q: sync %s: %s", a.Name, a.OpPhase, a.OpMessage)
		case a.OpPhase == app.OperationSucceeded && a.Health != "" && a.Health != app.HealthHealthy && a.Health != app.HealthProgressing:
			return fmt.Sprintf("app %q is %s after its sync", a.Name, a.Health)
		}
	}
	return ""
}

func after(t *time.Time, since time.Time) bool { return t != nil && t.After(since) }
