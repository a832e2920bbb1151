package accounts

import (
	"sync"
	"time"
)

// Limiter counts failed logins per user and per source address: after
// MaxFailures of either within Window, further logins of that user or
// from that source are refused until the window of the oldest failure has
// passed, as Argo CD limits its logins.
type Limiter struct {
	MaxFailures int
	Window      time.Duration
	now         func() time.Time

	mu       sync.Mutex
	failures map[string][]time.Time
}

// NewLimiter is a Limiter of max failures per window.
func NewLimiter(max int, window time.Duration) *Limiter {
	return &Limiter{MaxFailures: max, Window: window, now: time.Now, failures: map[string][]time.Time{}}
}

func keys(user, source string) [2]string { return [2]string{"user:" + user, "source:" + source} }

// Allow reports whether a login of user from source may be tried now;
// when not, how long until it may.
func (l *Limiter) Allow(user, source string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys(user, source) {
		fs := l.recent(k, now)
		if len(fs) >= l.MaxFailures {
			return false, fs[0].Add(l.Window).Sub(now)
		}
	}
	return true, 0
}

// Failed records a failed login.
func (l *Limiter) Failed(user, source string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys(user, source) {
		l.failures[k] = append(l.recent(k, now), now)
	}
}

// Succeeded forgets the user's failures (not the source's).
func (l *Limiter) Succeeded(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, "user:"+user)
}

// recent drops k's failures older than the window.
func (l *Limiter) recent(k string, now time.Time) []time.Time {
	fs := l.failures[k]
	i := 0
	for i < len(fs) && now.Sub(fs[i]) >= l.Window {
		i++
	}
	if fs = fs[i:]; len(fs) == 0 {
		delete(l.failures, k)
		return nil
	}
	l.failures[k] = fs
	return fs
}
