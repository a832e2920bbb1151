package app

import (
	"errors"
	"fmt"
)

// Validate checks a retry policy given with a sync (argocd app sync
// --retry-limit, --retry-backoff-*), naming each bad field under field.
func (p *RetryPolicy) Validate(field string) error {
	if p == nil || p.Backoff == nil {
		return nil
	}
	var errs []error
	b := p.Backoff
	for _, f := range []struct{ name, value string }{{"duration", b.Duration}, {"maxDuration", b.MaxDuration}} {
		if f.value == "" {
			continue
		}
		if d, err := parseBackoffDuration(f.value); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s.backoff.%s: %q is not a positive duration: write it like 5s or 3m (a bare number counts seconds)", field, f.name, f.value))
		}
	}
	if b.Factor != nil && *b.Factor < 1 {
		errs = append(errs, fmt.Errorf("%s.backoff.factor: %d is too small: use 1 (constant) or more (default %d)", field, *b.Factor, DefaultBackoffFactor))
	}
	return errors.Join(errs...)
}
