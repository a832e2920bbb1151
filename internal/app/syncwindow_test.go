package app

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSyncWindowStateAt(t *testing.T) {
	for _, tc := range []struct {
		name             string
		w                SyncWindow
		now              string
		active           bool
		nextOpen, nextCl string
	}{
		{"before a daily window", SyncWindow{Schedule: "0 22 * * *", Duration: "1h"}, "2026-12-01T21:59:59Z",
			false, "2026-12-01T22:00:00Z", "2026-12-01T23:00:00Z"},
		{"at its start", SyncWindow{Schedule: "0 22 * * *", Duration: "1h"}, "2026-12-01T22:00:00Z",
			true, "2026-12-02T22:00:00Z", "2026-12-01T23:00:00Z"},
		{"inside it", SyncWindow{Schedule: "0 22 * * *", Duration: "1h"}, "2026-12-01T22:59:59Z",
			true, "2026-12-02T22:00:00Z", "2026-12-01T23:00:00Z"},
		{"at its end", SyncWindow{Schedule: "0 22 * * *", Duration: "1h"}, "2026-12-01T23:00:00Z",
			false, "2026-12-02T22:00:00Z", "2026-12-02T23:00:00Z"},
		{"in a time zone", SyncWindow{Schedule: "0 22 * * *", Duration: "1h", TimeZone: "Europe/Berlin"}, "2026-12-01T21:30:00Z",
			true, "2026-12-02T21:00:00Z", "2026-12-01T22:00:00Z"},
		{"a time zone in summer time", SyncWindow{Schedule: "0 22 * * *", Duration: "1h", TimeZone: "Europe/Berlin"}, "2026-07-01T19:30:00Z",
			false, "2026-07-01T20:00:00Z", "2026-07-01T21:00:00Z"},
		{"overlapping occurrences merge", SyncWindow{Schedule: "*/10 * * * *", Duration: "15m"}, "2026-12-01T10:05:00Z",
			true, "", ""},
		{"a window across midnight", SyncWindow{Schedule: "30 23 * * *", Duration: "2h"}, "2026-12-02T00:30:00Z",
			true, "2026-12-02T23:30:00Z", "2026-12-02T01:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := tc.w.StateAt(at(t, tc.now))
			if err != nil {
				t.Fatal(err)
			}
			if st.Active != tc.active {
				t.Errorf("active = %v, want %v", st.Active, tc.active)
			}
			if tc.nextCl == "" { // never closes
				if !st.NextClose.IsZero() {
					t.Errorf("next close = %s, want none (the occurrences overlap for ever)", st.NextClose)
				}
				return
			}
			if got := st.NextOpen.Format(time.RFC3339); got != tc.nextOpen {
				t.Errorf("next open = %s, want %s", got, tc.nextOpen)
			}
			if got := st.NextClose.Format(time.RFC3339); got != tc.nextCl {
				t.Errorf("next close = %s, want %s", got, tc.nextCl)
			}
		})
	}
}

func windowsProject(t *testing.T, windows string) *AppProject {
	return mustProject(t, "  sourceRepos: ['*']\n  destinations: [{name: '*', namespace: '*'}]\n  syncWindows:\n"+windows)
}

func TestSyncWindowMatches(t *testing.T) {
	a := fanoutApp() // app "web", regions us-east-1 and eu-west-1, namespace web
	s := a.WindowSubject(nil)
	for _, tc := range []struct {
		w    SyncWindow
		want bool
	}{
		{SyncWindow{Applications: []string{"web"}}, true},
		{SyncWindow{Applications: []string{"w*"}}, true},
		{SyncWindow{Applications: []string{"api"}}, false},
		{SyncWindow{Namespaces: []string{"we?"}}, true},
		{SyncWindow{Namespaces: []string{"kube-*"}}, false},
		{SyncWindow{Clusters: []string{"eu-*"}}, true},
		{SyncWindow{Clusters: []string{"ap-*"}}, false},
		{SyncWindow{Applications: []string{"api"}, Clusters: []string{"us-east-1"}}, true}, // any of them
		{SyncWindow{}, false},
	} {
		if got := tc.w.Matches(s); got != tc.want {
			t.Errorf("%+v matches %+v = %v, want %v", tc.w, s, got, tc.want)
		}
	}
}

func fanoutApp() *Application {
	return &Application{Metadata: ObjectMeta{Name: "web"}, Spec: Spec{
		Destinations: []Destination{{Name: "us-east-1", Namespace: "web"}, {Name: "eu-west-1", Namespace: "web"}}}}
}

func TestSyncAllowed(t *testing.T) {
	const (
		deny        = "  - {kind: deny, schedule: '0 12 * * *', duration: 1h, applications: ['*']}\n"
		denyManual  = "  - {kind: deny, schedule: '30 12 * * *', duration: 1h, applications: ['*'], manualSync: true}\n"
		allow       = "  - {kind: allow, schedule: '0 20 * * *', duration: 2h, namespaces: [web]}\n"
		allowManual = "  - {kind: allow, schedule: '0 20 * * *', duration: 2h, namespaces: [web], manualSync: true}\n"
		allowNoon   = "  - {kind: allow, schedule: '0 11 * * *', duration: 3h, clusters: [us-*]}\n"
		otherApp    = "  - {kind: deny, schedule: '* * * * *', duration: 1h, applications: [api]}\n"
	)
	s := fanoutApp().WindowSubject(nil)
	for _, tc := range []struct {
		name       string
		windows    string
		now        string
		manual     bool
		allowed    bool
		blocking   []int
		opensAt    string
		messageHas string
	}{
		{"no window for the app", otherApp, "2026-12-01T12:10:00Z", false, true, nil, "", ""},
		{"active deny", deny, "2026-12-01T12:10:00Z", false, false, []int{0}, "2026-12-01T13:00:00Z",
			`app "web": sync blocked by deny sync window team-a/syncWindows[0] (deny "0 12 * * *" for 1h, UTC); syncs may run from 2026-12-01T13:00:00Z`},
		{"active deny, manual", deny, "2026-12-01T12:10:00Z", true, false, []int{0}, "2026-12-01T13:00:00Z", "only when it sets manualSync: true"},
		{"inactive deny", deny, "2026-12-01T13:00:00Z", false, true, nil, "", ""},
		{"two active denies: the later close", deny + denyManual, "2026-12-01T12:45:00Z", false, false, []int{0, 1}, "2026-12-01T13:30:00Z", ""},
		{"manual needs every active deny to allow it", deny + denyManual, "2026-12-01T12:45:00Z", true, false, []int{0, 1}, "2026-12-01T13:30:00Z", ""},
		{"manualSync lets a manual sync through", denyManual, "2026-12-01T12:45:00Z", true, true, nil, "", ""},
		{"manualSync holds automated syncs", denyManual, "2026-12-01T12:45:00Z", false, false, []int{0}, "2026-12-01T13:30:00Z", ""},
		{"outside every allow", allow, "2026-12-01T12:00:00Z", false, false, []int{0}, "2026-12-01T20:00:00Z",
			"outside every allow sync window of the app"},
		{"outside every allow, manual", allow, "2026-12-01T12:00:00Z", true, false, []int{0}, "2026-12-01T20:00:00Z", ""},
		{"outside an allow with manualSync, manual", allowManual, "2026-12-01T12:00:00Z", true, true, nil, "", ""},
		{"inside an allow", allow, "2026-12-01T21:00:00Z", false, true, nil, "", ""},
		{"one allow active of two", allow + allowNoon, "2026-12-01T13:00:00Z", false, true, nil, "", ""},
		{"deny wins over allow", deny + allowNoon, "2026-12-01T12:30:00Z", false, false, []int{0}, "2026-12-01T13:00:00Z", ""},
		{"after the deny, the allow is gone: wait for the next allow", deny + allow, "2026-12-01T12:30:00Z", false, false, []int{0},
			"2026-12-01T20:00:00Z", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := windowsProject(t, tc.windows)
			d := p.SyncAllowed(s, at(t, tc.now), tc.manual)
			if d.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v (%+v)", d.Allowed, tc.allowed, d)
			}
			var idx []int
			for _, r := range d.Blocking {
				idx = append(idx, r.Index)
				if r.Project != "team-a" {
					t.Errorf("blocking window of project %q", r.Project)
				}
			}
			if !slices.Equal(idx, tc.blocking) {
				t.Errorf("blocking = %v, want %v", idx, tc.blocking)
			}
			if tc.opensAt != "" {
				if got := d.OpensAt.Format(time.RFC3339); got != tc.opensAt {
					t.Errorf("opens at %s, want %s", got, tc.opensAt)
				}
			}
			if !strings.Contains(d.Message, tc.messageHas) {
				t.Errorf("message %q lacks %q", d.Message, tc.messageHas)
			}
		})
	}
}

func TestValidateSyncWindows(t *testing.T) {
	p, err := ParseProject([]byte(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-a
spec:
  sourceRepos: ['*']
  syncWindows:
  - {kind: allow, schedule: '0 22 * * *', duration: 1h, applications: ['*'], timeZone: Europe/Berlin}
  - {kind: block, schedule: '0 22 * *', duration: 1 hour, timeZone: Mars/Olympus, applications: ['[']}
  - {schedule: '@daily'}
  - {kind: deny, schedule: '61 * * * *', duration: -5m, namespaces: [web]}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = ValidateProject(p)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`appproject "team-a": `,
		`spec.syncWindows[1].kind: "block" is not a kind of window: write allow or deny`,
		`spec.syncWindows[1].schedule: "0 22 * *" is not a 5-field cron schedule`,
		`spec.syncWindows[1].duration: "1 hour" is not a positive duration`,
		`spec.syncWindows[1].timeZone: "Mars/Olympus" is not a time zone`,
		`spec.syncWindows[1].applications[0]: "[" is not a valid glob`,
		`spec.syncWindows[2].kind: required`,
		`spec.syncWindows[2].schedule: "@daily" is not a 5-field cron schedule`,
		`spec.syncWindows[2].duration: required`,
		`spec.syncWindows[2]: names no applications, namespaces or clusters`,
		`spec.syncWindows[3].schedule: "61 * * * *"`,
		`spec.syncWindows[3].duration: "-5m" is not a positive duration`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "syncWindows[0]") {
		t.Errorf("the valid window was refused: %s", msg)
	}
}
