package app

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Argo CD's defaults for syncPolicy.retry.backoff.
const (
	DefaultBackoffDuration    = 5 * time.Second
	DefaultBackoffFactor      = 2
	DefaultBackoffMaxDuration = 3 * time.Minute
)

// MaxRetries is how many times a failed sync is retried: 0 for a nil policy
// (no retry section means no retry, as in Argo CD) or limit 0, -1 for
// unlimited. Argo CD treats every negative limit as unlimited, so Ferry does
// too and reports it as -1.
func (p *RetryPolicy) MaxRetries() int64 {
	switch {
	case p == nil:
		return 0
	case p.Limit < 0:
		return -1
	}
	return p.Limit
}

// ShouldRetry reports whether a sync that failed after `retries` retries is
// retried once more.
func (p *RetryPolicy) ShouldRetry(retries int64) bool {
	limit := p.MaxRetries()
	return limit < 0 || retries < limit
}

// Delay is how long to wait before the next retry when `retries` retries
// were already made: duration × factor^retries, capped at maxDuration, so
// with the defaults 5s, 10s, 20s, … 3m. A nil policy uses the defaults.
func (p *RetryPolicy) Delay(retries int64) time.Duration {
	base, factor, ceiling := DefaultBackoffDuration, int64(DefaultBackoffFactor), DefaultBackoffMaxDuration
	if p != nil && p.Backoff != nil {
		b := p.Backoff
		if d, err := parseBackoffDuration(b.Duration); err == nil && d > 0 {
			base = d
		}
		if d, err := parseBackoffDuration(b.MaxDuration); err == nil && d > 0 {
			ceiling = d
		}
		if b.Factor != nil && *b.Factor >= 1 {
			factor = *b.Factor
		}
	}
	d := base
	for i := int64(0); i < retries && d < ceiling; i++ {
		if d > ceiling/time.Duration(factor) {
			return ceiling // and d*factor might overflow
		}
		d *= time.Duration(factor)
	}
	return min(d, ceiling)
}

// parseBackoffDuration reads a backoff duration as Argo CD does: a Go
// duration ("5s", "3m"), or a bare number of seconds ("5").
func parseBackoffDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > int64(math.MaxInt64/time.Second) || n < 0 {
			return 0, fmt.Errorf("%d seconds is out of range", n)
		}
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}
