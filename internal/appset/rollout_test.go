package appset

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ferry-gitops/ferry/internal/app"
)

func rollingSet(t *testing.T, steps string) *ApplicationSet {
	t.Helper()
	s, err := Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: rs}
spec:
  generators: [{list: {elements: [{app: a}]}}]
  strategy:
    type: RollingSync
    rollingSync:
      steps:
` + steps + `
  template:
    metadata: {name: '{{app}}'}
    spec:
      project: default
      source: {repoURL: 'https://git.example/r.git', path: '{{app}}'}
      destination: {name: in-cluster, namespace: x}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const twoSteps = `      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]`

func statusOf(r Rollout, name string) ApplicationStatus {
	for _, s := range r.Statuses {
		if s.Application == name {
			return s
		}
	}
	return ApplicationStatus{}
}

// TestProgressTwoSteps walks a rollout through two steps: step 2 waits
// until step 1 is Healthy, a failed sync in step 1 halts it naming the
// app, and a new revision of that app resumes it.
func TestProgressTwoSteps(t *testing.T) {
	s := rollingSet(t, twoSteps)
	dev, prod := map[string]string{"env": "dev"}, map[string]string{"env": "prod"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	apps := []RolloutApp{
		{Name: "a1", Labels: dev, Changed: true, Sync: app.SyncStatusOutOfSync},
		{Name: "a2", Labels: dev, Changed: true, Sync: app.SyncStatusOutOfSync},
		{Name: "b1", Labels: prod, Changed: true, Sync: app.SyncStatusOutOfSync},
		{Name: "c", Changed: true, Sync: app.SyncStatusOutOfSync},
	}
	r := s.Progress(apps, nil, t0)
	if got := strings.Join(r.Sync, ","); got != "a1,a2" {
		t.Fatalf("step 1 syncs a1,a2 first, got %q", got)
	}
	if st := statusOf(r, "b1"); st.Status != ProgressiveWaiting || st.Step != "2" {
		t.Fatalf("b1 waits in step 2: %+v", st)
	}
	if st := statusOf(r, "c"); st.Step != "-1" {
		t.Fatalf("c is in no step: %+v", st)
	}
	if !r.Progressing || r.Message != "ApplicationSet is performing rollout of step 1" {
		t.Fatalf("rollout at step 1: %v %q", r.Progressing, r.Message)
	}

	// a1's sync succeeded and it is Healthy; a2's failed.
	for i := range apps {
		apps[i].Changed, apps[i].Revision, apps[i].ReconciledAt = false, "sha1", at(2*time.Second)
	}
	apps[0].Sync, apps[0].Health, apps[0].OpStartedAt, apps[0].OpPhase = app.SyncStatusSynced, app.HealthHealthy, at(time.Second), app.OperationSucceeded
	apps[1].Health, apps[1].OpStartedAt, apps[1].OpPhase, apps[1].OpMessage = app.HealthMissing, at(time.Second), app.OperationFailed, "one or more objects failed to apply"
	r = s.Progress(apps, r.Statuses, t0.Add(3*time.Second))
	if st := statusOf(r, "a1"); st.Status != ProgressiveHealthy {
		t.Fatalf("a1 Healthy: %+v", st)
	}
	if st := statusOf(r, "a2"); st.Status != ProgressiveProgressing || !strings.Contains(st.Message, "one or more objects failed to apply") {
		t.Fatalf("a2 Progressing with its failure: %+v", st)
	}
	if len(r.Sync) != 0 || statusOf(r, "b1").Status != ProgressiveWaiting {
		t.Fatalf("step 2 is held: %v %+v", r.Sync, statusOf(r, "b1"))
	}
	if !strings.Contains(r.Message, `step 1: app "a2": sync Failed: one or more objects failed to apply`) {
		t.Fatalf("the condition names the step and the app: %q", r.Message)
	}
	// Looking again changes nothing: the rollout stays halted.
	r = s.Progress(apps, r.Statuses, t0.Add(10*time.Second))
	if len(r.Sync) != 0 || statusOf(r, "a2").Status != ProgressiveProgressing {
		t.Fatalf("still halted: %v %+v", r.Sync, statusOf(r, "a2"))
	}

	// A fixing commit: a2 (and the others) compare at sha2.
	for i := range apps {
		apps[i].Revision, apps[i].ReconciledAt, apps[i].Sync = "sha2", at(20*time.Second), app.SyncStatusOutOfSync
	}
	r = s.Progress(apps, r.Statuses, t0.Add(21*time.Second))
	if len(r.Sync) != 0 || statusOf(r, "a2").Status != ProgressiveWaiting {
		t.Fatalf("the new revision waits until every app compared after it: %v %+v", r.Sync, statusOf(r, "a2"))
	}
	for i := range apps {
		apps[i].ReconciledAt = at(22 * time.Second)
	}
	r = s.Progress(apps, r.Statuses, t0.Add(23*time.Second))
	if got := strings.Join(r.Sync, ","); got != "a1,a2" {
		t.Fatalf("the new revision syncs step 1 again, got %q", got)
	}
	if st := statusOf(r, "b1"); st.Status != ProgressiveWaiting {
		t.Fatalf("b1 waits for step 1: %+v", st)
	}
	for _, n := range []string{"a1", "a2"} {
		apps[map[string]int{"a1": 0, "a2": 1}[n]] = RolloutApp{Name: n, Labels: dev, Sync: app.SyncStatusSynced, Health: app.HealthHealthy,
			Revision: "sha2", ReconciledAt: at(31 * time.Second), OpStartedAt: at(24 * time.Second), OpPhase: app.OperationSucceeded}
	}
	r = s.Progress(apps, r.Statuses, t0.Add(32*time.Second))
	if got := strings.Join(r.Sync, ","); got != "b1" {
		t.Fatalf("step 1 Healthy: step 2 syncs b1, got %q (%+v)", got, r.Statuses)
	}
	if r.Message != "ApplicationSet is performing rollout of step 2" {
		t.Fatalf("at step 2: %q", r.Message)
	}
	apps[2].Sync, apps[2].Health, apps[2].OpStartedAt, apps[2].OpPhase = app.SyncStatusSynced, app.HealthHealthy, at(33*time.Second), app.OperationSucceeded
	apps[2].ReconciledAt = at(34 * time.Second)
	r = s.Progress(apps, r.Statuses, t0.Add(40*time.Second))
	if r.Progressing || r.Message != "ApplicationSet Rollout has completed" {
		t.Fatalf("complete: %v %q", r.Progressing, r.Message)
	}
	if st := statusOf(r, "c"); st.Status != ProgressiveWaiting {
		t.Fatalf("an app in no step is not synced by the rollout: %+v", st)
	}
}

// TestProgressMaxUpdate: maxUpdate bounds the apps of a step Pending or
// Progressing at once.
func TestProgressMaxUpdate(t *testing.T) {
	for _, tc := range []struct {
		max  string
		want int
	}{{"", 4}, {"1", 1}, {"0", 0}, {`"50%"`, 2}, {`"10%"`, 1}, {`"0%"`, 0}, {`"100%"`, 4}} {
		steps := "      - matchExpressions: [{key: env, operator: NotIn, values: [prod]}]"
		if tc.max != "" {
			steps += "\n        maxUpdate: " + tc.max
		}
		s := rollingSet(t, steps)
		var apps []RolloutApp
		for _, n := range []string{"a", "b", "c", "d"} {
			apps = append(apps, RolloutApp{Name: n, Changed: true})
		}
		if got := len(s.Progress(apps, nil, time.Now()).Sync); got != tc.want {
			t.Errorf("maxUpdate %s: %d apps synced at once, want %d", tc.max, got, tc.want)
		}
	}
}

func TestRollingSyncValidation(t *testing.T) {
	_, err := Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: rs}
spec:
  generators: [{list: {elements: [{app: a}]}}]
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: Exists}]
        maxUpdate: "ten"
  template:
    metadata: {name: '{{app}}'}
    spec:
      project: default
      source: {repoURL: 'https://git.example/r.git', path: '{{app}}'}
      destination: {name: in-cluster, namespace: x}
`))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{
		`spec.strategy.rollingSync.steps[0].matchExpressions[0].operator: "Exists" is not an operator of a RollingSync step`,
		`spec.strategy.rollingSync.steps[0].maxUpdate: "ten" is not a count or a percentage`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
	if pct, neg := intstr.FromString("25%"), intstr.FromInt32(-1); !validMaxUpdate(&pct) || validMaxUpdate(&neg) {
		t.Error("validMaxUpdate")
	}
}

// TestRollingSyncDisablesAutoSync: the generated apps of a RollingSync set
// have automated sync off, keeping prune for the set's syncs.
func TestRollingSyncDisablesAutoSync(t *testing.T) {
	s := rollingSet(t, twoSteps)
	s.Spec.Template.Spec["syncPolicy"] = map[string]any{"automated": map[string]any{"prune": true}}
	res, err := Generate(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Apps) != 1 {
		t.Fatalf("want one app: %v", res.Invalid)
	}
	a := &res.Apps[0]
	if a.AutomatedSync() || !s.RolloutPrune(a) {
		t.Fatalf("want automated sync off and prune kept: %+v", a.Spec.SyncPolicy.Automated)
	}
}
