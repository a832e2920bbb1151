package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

// HealthError is a wave that did not become healthy: an object Degraded,
// or still Progressing (or Missing) when the wait timed out. The sync
// stops there: no later wave is applied and nothing is pruned.
type HealthError struct {
	// Wave is the sync wave that was waited for.
	Wave int
	// TimedOut tells that the wait ran out of time rather than seeing an
	// object fail.
	TimedOut bool
	// Objects describes the objects that were not healthy:
	// "Deployment/shop/web: Degraded: <health message>".
	Objects []string
}

func (e *HealthError) Error() string {
	what := "an object is Degraded"
	if e.TimedOut {
		what = "timed out waiting for health"
	}
	shown := e.Objects
	if len(shown) > 5 {
		shown = append(append([]string(nil), shown[:5]...), fmt.Sprintf("and %d more", len(e.Objects)-5))
	}
	return fmt.Sprintf("wave %d is not healthy (%s), so later waves were not applied: %s", e.Wave, what, strings.Join(shown, "; "))
}

// IsUnhealthy tells whether err is (or wraps) a *HealthError.
func IsUnhealthy(err error) bool {
	var h *HealthError
	return errors.As(err, &h)
}

// StageWait is a Progress of a wave's wait for health: the sync writes
// nothing meanwhile.
const StageWait = "wait"

// waitHealthy waits until no object of the wave is Progressing or Missing.
// A Degraded object fails the wave at once; Suspended counts as done (a
// paused rollout is the user's choice).
func (s *syncRun) waitHealthy(ctx context.Context, wave int, tasks []*task) error {
	timeout := s.req.WaveTimeout
	if timeout <= 0 {
		timeout = s.c.opts.WaveTimeout
	}
	deadline := time.Now().Add(timeout)
	return Poll(ctx, s.c.opts.HealthPoll, func(ctx context.Context) (bool, error) {
		var waiting, degraded []string
		for _, t := range tasks {
			if t.change.Action == "" || t.key.Kind == "" {
				continue
			}
			live, err := s.c.liveGet(ctx, t.mapping, t.key)
			if err != nil {
				return false, newObjectError(t.key, "get", err)
			}
			code, msg := s.c.opts.Health.Get(live)
			line := fmt.Sprintf("%s: %s", keyString(t.key), code)
			if msg != "" {
				line += ": " + msg
			}
			switch code {
			case app.HealthDegraded:
				degraded = append(degraded, line)
				s.cs.note(t.key, "then "+strings.TrimPrefix(line, keyString(t.key)+": "))
			case app.HealthProgressing, app.HealthMissing:
				waiting = append(waiting, line)
			}
		}
		sort.Strings(degraded)
		sort.Strings(waiting)
		switch {
		case len(degraded) > 0:
			return false, &HealthError{Wave: wave, Objects: degraded}
		case len(waiting) == 0:
			return true, nil
		case time.Now().After(deadline):
			return false, &HealthError{Wave: wave, TimedOut: true, Objects: waiting}
		}
		s.progress(wave, StageWait, fmt.Sprintf("waiting for %d of %d objects to become healthy", len(waiting), len(tasks)))
		return false, nil
	})
}

// needsFinalWait tells whether the last wave must be healthy before Apply
// returns: when objects marked PruneLast are to be pruned after it.
func (s *syncRun) needsFinalWait(ctx context.Context) bool {
	if !s.req.Prune {
		return false
	}
	for _, obj := range s.staleObjects(ctx) {
		if s.pruneOptions(obj).PruneLast {
			return true
		}
	}
	return false
}

// note adds why to the message of key's change: what the wait saw of an
// object that was applied but did not become healthy.
func (cs *ChangeSet) note(key app.ResourceKey, why string) {
	for i := range cs.Entries {
		if e := &cs.Entries[i]; e.Key == key && e.Hook == "" {
			e.Message = joinMessage(e.Message, why)
		}
	}
}
