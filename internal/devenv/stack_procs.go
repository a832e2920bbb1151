package devenv

import (
	"errors"
	"fmt"
)

// procs are the stack's processes, the clusters' first; s.mu is held.
func (s *Stack) procs() []*proc {
	var out []*proc
	for _, r := range s.clusters() {
		for _, group := range r.procs() {
			out = append(out, group...)
		}
	}
	if s.temporal != nil {
		out = append(out, s.temporal.procs()...)
	}
	out = append(out, s.redis, s.registry, s.dex, s.mailpit)
	return out
}

// Pids returns the process ids of the stack's processes (each one also the
// id of its process group), for diagnostics and for tests that check that
// nothing is left behind.
func (s *Stack) Pids() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, p := range s.procs() {
		if p != nil {
			out[p.name] = p.pid()
		}
	}
	return out
}

// Check returns an error naming every process of a running stack that has
// exited, with its log. `ferry dev up` polls it: half a stack is worse than
// none.
func (s *Stack) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("the stack is stopped")
	}
	var errs []error
	for _, p := range s.procs() {
		if p == nil {
			continue
		}
		if done, err := p.exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v): see %s", p.name, err, p.logPath))
		}
	}
	return errors.Join(errs...)
}
