package app

import (
	"fmt"
	"time"
	// Time zones come from the binary, not the machine: the CLI and every
	// worker then read a window's timeZone alike.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// SyncWindow is one of an AppProject's spec.syncWindows, as Argo CD writes
// it: from every time the cron schedule fires (in timeZone), for duration,
// the window is active. An active deny window blocks syncs; when a project
// has allow windows for an app, the app syncs only while one is active.
type SyncWindow struct {
	// Kind is allow or deny.
	Kind string `json:"kind"`
	// Schedule is a 5-field cron expression: when the window opens.
	Schedule string `json:"schedule"`
	// Duration is how long it stays open, a Go duration (1h, 30m).
	Duration string `json:"duration"`
	// Applications, Namespaces and Clusters are globs: the window applies
	// to an app when its name, a destination namespace, or a destination
	// (region, name or server) matches one of them.
	Applications []string `json:"applications,omitempty"`
	Namespaces   []string `json:"namespaces,omitempty"`
	Clusters     []string `json:"clusters,omitempty"`
	// ManualSync lets manual syncs run when the window would block them.
	ManualSync bool `json:"manualSync,omitempty"`
	// TimeZone is the IANA zone the schedule is read in; empty is UTC.
	TimeZone    string `json:"timeZone,omitempty"`
	Description string `json:"description,omitempty"`
}

const (
	WindowAllow = "allow"
	WindowDeny  = "deny"
)

// windowParser reads the schedules: minute, hour, day of month, month, day
// of week, as Argo CD's does.
var windowParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// maxWindowSteps bounds the walk over overlapping occurrences (a window
// longer than its period, such as every minute for 24h, never closes): past
// it, a close time is unknown.
const maxWindowSteps = 5000

// windowTimes is a window whose schedule, duration and zone have been read.
type windowTimes struct {
	schedule cron.Schedule
	duration time.Duration
	loc      *time.Location
}

func (w SyncWindow) times() (windowTimes, error) {
	sched, err := windowParser.Parse(w.Schedule)
	if err != nil {
		return windowTimes{}, fmt.Errorf("schedule %q: %w", w.Schedule, err)
	}
	d, err := time.ParseDuration(w.Duration)
	if err != nil {
		return windowTimes{}, fmt.Errorf("duration %q: %w", w.Duration, err)
	}
	if d <= 0 {
		return windowTimes{}, fmt.Errorf("duration %q: must be positive", w.Duration)
	}
	loc, err := windowLocation(w.TimeZone)
	if err != nil {
		return windowTimes{}, err
	}
	return windowTimes{schedule: sched, duration: d, loc: loc}, nil
}

func windowLocation(zone string) (*time.Location, error) {
	if zone == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", zone, err)
	}
	return loc, nil
}

// next is the first start strictly after t.
func (wt windowTimes) next(t time.Time) time.Time {
	return wt.schedule.Next(t.In(wt.loc)).UTC()
}

// activeSince reports whether the window is active at t (some start s with
// s <= t < s+duration) and the earliest such start.
func (wt windowTimes) activeSince(t time.Time) (time.Time, bool) {
	// Next is strictly after its argument and works in whole seconds; a
	// start at exactly t counts as active.
	s := wt.next(t.Add(-wt.duration))
	if s.IsZero() || s.After(t) {
		return time.Time{}, false
	}
	return s, true
}

// closeAfter is when a window active since start closes: the end of the
// last of the occurrences that overlap. Zero: not within maxWindowSteps.
func (wt windowTimes) closeAfter(start time.Time) time.Time {
	end := start.Add(wt.duration)
	cur := start
	for range maxWindowSteps {
		n := wt.next(cur)
		if n.IsZero() || !n.Before(end) {
			return end
		}
		end = n.Add(wt.duration)
		cur = n
	}
	return time.Time{}
}

// WindowState is a window at one instant: whether it is active, and the
// next times it opens and closes (zero when unknown or never).
type WindowState struct {
	Active    bool      `json:"active"`
	NextOpen  time.Time `json:"nextOpen,omitzero"`
	NextClose time.Time `json:"nextClose,omitzero"`
}

// StateAt is the window at t. For an active window NextClose is when it
// closes and NextOpen when it opens again after that; otherwise NextOpen is
// its next start and NextClose the close of that occurrence.
func (w SyncWindow) StateAt(t time.Time) (WindowState, error) {
	wt, err := w.times()
	if err != nil {
		return WindowState{}, err
	}
	return wt.stateAt(t.UTC()), nil
}

func (wt windowTimes) stateAt(t time.Time) WindowState {
	if start, ok := wt.activeSince(t); ok {
		st := WindowState{Active: true, NextClose: wt.closeAfter(start)}
		if !st.NextClose.IsZero() {
			// The close is the end of an occurrence, never itself a start
			// inside the window: the next start after it reopens it.
			st.NextOpen = wt.next(st.NextClose.Add(-time.Nanosecond))
		}
		return st
	}
	st := WindowState{NextOpen: wt.next(t)}
	if !st.NextOpen.IsZero() {
		st.NextClose = wt.closeAfter(st.NextOpen)
	}
	return st
}

// msgNoMatcher: a window that names nothing applies to no app.
const msgNoMatcher = "names no applications, namespaces or clusters, so it applies to no app: add applications: ['*'] to apply it to every app of the project"
