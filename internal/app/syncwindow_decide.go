package app

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// The decisions below follow Argo CD's SyncWindows.CanSync:
//
//   - No window applies to the app: every sync may run.
//   - An active deny window blocks every sync; a manual one runs only when
//     every active deny window has manualSync.
//   - Otherwise an active allow window lets every sync run.
//   - Otherwise, when allow windows apply to the app (none active), syncs are
//     blocked; a manual one runs only when every such window has manualSync.
//
// A window applies to an app when a glob of its applications matches the
// app's name, or one of its namespaces a destination namespace, or one of
// its clusters a destination (region, name or server). Ferry blocks or runs
// an app's sync in all of its regions together.

// WindowSubject is what windows match an app by.
type WindowSubject struct {
	App        string   `json:"app"`
	Namespaces []string `json:"namespaces,omitempty"`
	// Clusters are the destinations' regions, names and servers.
	Clusters []string `json:"clusters,omitempty"`
}

// WindowSubject is the app as its project's windows see it.
func (a *Application) WindowSubject(rc *regions.Config) WindowSubject {
	s := WindowSubject{App: a.Metadata.Name}
	for _, d := range a.DestinationList() {
		s.Namespaces = append(s.Namespaces, d.Namespace)
		for _, c := range []string{d.region(rc), d.Name, d.Server} {
			if c != "" && !slices.Contains(s.Clusters, c) {
				s.Clusters = append(s.Clusters, c)
			}
		}
	}
	return s
}

// Matches reports whether the window applies to the subject.
func (w SyncWindow) Matches(s WindowSubject) bool {
	anyMatch := func(patterns, values []string) bool {
		for _, p := range patterns {
			for _, v := range values {
				if globMatchPlain(p, v) {
					return true
				}
			}
		}
		return false
	}
	return anyMatch(w.Applications, []string{s.App}) || anyMatch(w.Namespaces, s.Namespaces) ||
		anyMatch(w.Clusters, s.Clusters)
}

// WindowRef names one window of a project, for messages and the status.
type WindowRef struct {
	Project    string `json:"project"`
	Index      int    `json:"index"`
	Kind       string `json:"kind"`
	Schedule   string `json:"schedule"`
	Duration   string `json:"duration"`
	TimeZone   string `json:"timeZone,omitempty"`
	ManualSync bool   `json:"manualSync,omitempty"`
}

func (r WindowRef) String() string {
	return fmt.Sprintf("%s/syncWindows[%d] (%s %q for %s, %s)", r.Project, r.Index, r.Kind, r.Schedule, r.Duration,
		orUTC(r.TimeZone))
}

func orUTC(zone string) string {
	if zone == "" {
		return "UTC"
	}
	return zone
}

// WindowDecision says whether a sync may run now and, when not, which
// windows block it and when it may run next.
type WindowDecision struct {
	Allowed bool `json:"allowed"`
	// Blocking are the windows that block it: the active deny windows, or
	// else the allow windows, none of them active.
	Blocking []WindowRef `json:"blocking,omitempty"`
	// OpensAt is when an automated sync may run next; zero when unknown
	// within the horizon Ferry looks at.
	OpensAt time.Time `json:"opensAt,omitzero"`
	// Message explains a block, naming the windows and the fix.
	Message string `json:"message,omitempty"`
}

// appliedWindow is a window of the project that applies to the subject.
type appliedWindow struct {
	ref   WindowRef
	times windowTimes
}

// windowsFor are the windows that apply to s. Windows that do not read
// (ValidateProject refuses them) apply to no app.
func (p *AppProject) windowsFor(s WindowSubject) []appliedWindow {
	var out []appliedWindow
	for i, w := range p.Spec.SyncWindows {
		if !w.Matches(s) {
			continue
		}
		wt, err := w.times()
		if err != nil {
			continue
		}
		out = append(out, appliedWindow{ref: WindowRef{Project: p.Metadata.Name, Index: i, Kind: w.Kind,
			Schedule: w.Schedule, Duration: w.Duration, TimeZone: w.TimeZone, ManualSync: w.ManualSync}, times: wt})
	}
	return out
}

// maxDecisionSteps bounds the search for the next time a sync may run.
const maxDecisionSteps = 200

// SyncAllowed decides whether a sync of the subject may run at now: manual
// for `ferry app sync`, else automated.
func (p *AppProject) SyncAllowed(s WindowSubject, now time.Time, manual bool) WindowDecision {
	windows := p.windowsFor(s)
	now = now.UTC()
	allowed, blocking := decide(windows, now, manual)
	if allowed {
		return WindowDecision{Allowed: true}
	}
	d := WindowDecision{Blocking: blocking, OpensAt: nextAllowed(windows, now)}
	d.Message = blockMessage(s.App, d, manual)
	return d
}

// decide is CanSync at t, with the windows that block.
func decide(windows []appliedWindow, t time.Time, manual bool) (bool, []WindowRef) {
	var denies, allows []WindowRef
	allowActive := false
	for _, w := range windows {
		_, active := w.times.activeSince(t)
		switch {
		case w.ref.Kind == WindowDeny && active:
			denies = append(denies, w.ref)
		case w.ref.Kind == WindowAllow && active:
			allowActive = true
		case w.ref.Kind == WindowAllow:
			allows = append(allows, w.ref)
		}
	}
	everyManual := func(refs []WindowRef) bool {
		return !slices.ContainsFunc(refs, func(r WindowRef) bool { return !r.ManualSync })
	}
	switch {
	case len(denies) > 0:
		return manual && everyManual(denies), denies
	case allowActive, len(allows) == 0:
		return true, nil
	}
	return manual && everyManual(allows), allows
}

// nextAllowed is the first time after now an automated sync may run: it
// steps from boundary to boundary (the close of the active deny windows, the
// next start of an allow window). Zero when not found within the bounds.
func nextAllowed(windows []appliedWindow, now time.Time) time.Time {
	t := now
	for range maxDecisionSteps {
		if ok, _ := decide(windows, t, false); ok {
			return t
		}
		var next time.Time
		for _, w := range windows {
			var b time.Time
			if start, active := w.times.activeSince(t); active {
				b = w.times.closeAfter(start)
			} else if w.ref.Kind == WindowAllow {
				b = w.times.next(t)
			}
			if !b.IsZero() && b.After(t) && (next.IsZero() || b.Before(next)) {
				next = b
			}
		}
		if next.IsZero() {
			return time.Time{}
		}
		t = next
	}
	return time.Time{}
}

func blockMessage(appName string, d WindowDecision, manual bool) string {
	names := make([]string, len(d.Blocking))
	for i, r := range d.Blocking {
		names[i] = r.String()
	}
	var b strings.Builder
	if d.Blocking[0].Kind == WindowDeny {
		fmt.Fprintf(&b, "app %q: sync blocked by deny sync window %s", appName, strings.Join(names, ", "))
	} else {
		fmt.Fprintf(&b, "app %q: sync blocked: outside every allow sync window of the app: %s", appName, strings.Join(names, ", "))
	}
	if d.OpensAt.IsZero() {
		b.WriteString("; no opening found in the windows' next occurrences")
	} else {
		fmt.Fprintf(&b, "; syncs may run from %s", d.OpensAt.Format(time.RFC3339))
	}
	if manual {
		b.WriteString("; a manual sync runs in a window only when it sets manualSync: true (see ferry project windows " +
			d.Blocking[0].Project + ")")
	}
	return b.String()
}

// SyncWindowStatus is an automated sync that the project's sync windows
// hold back: the app's status.syncWindow.
type SyncWindowStatus struct {
	// Revision is the commit that waits to be synced.
	Revision string      `json:"revision,omitempty"`
	Blocking []WindowRef `json:"blocking,omitempty"`
	// OpensAt is when the sync may run; nil when unknown.
	OpensAt *time.Time `json:"opensAt,omitempty"`
	Message string     `json:"message"`
}
