package app

import (
	"testing"
	"time"
)

func TestRetryPolicy(t *testing.T) {
	three := int64(3)
	one := int64(1)
	tests := []struct {
		name       string
		p          *RetryPolicy
		maxRetries int64
		delays     []time.Duration // Delay(0), Delay(1), ...
	}{
		{"nil: no retry, default backoff", nil, 0,
			[]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}},
		{"defaults cap at 3m", &RetryPolicy{Limit: 10}, 10,
			[]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 3 * time.Minute, 3 * time.Minute}},
		{"negative is unlimited", &RetryPolicy{Limit: -5}, -1, nil},
		{"bare seconds and factor 3", &RetryPolicy{Limit: 2, Backoff: &Backoff{Duration: "10", Factor: &three, MaxDuration: "1m"}}, 2,
			[]time.Duration{10 * time.Second, 30 * time.Second, time.Minute, time.Minute}},
		{"factor 1 is constant", &RetryPolicy{Limit: 1, Backoff: &Backoff{Duration: "2s", Factor: &one}}, 1,
			[]time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second}},
	}
	for _, tt := range tests {
		if got := tt.p.MaxRetries(); got != tt.maxRetries {
			t.Errorf("%s: MaxRetries = %d, want %d", tt.name, got, tt.maxRetries)
		}
		for i, want := range tt.delays {
			if got := tt.p.Delay(int64(i)); got != want {
				t.Errorf("%s: Delay(%d) = %s, want %s", tt.name, i, got, want)
			}
		}
	}
	if got := (&RetryPolicy{}).Delay(1 << 40); got != DefaultBackoffMaxDuration {
		t.Errorf("Delay(huge) = %s, want the cap", got)
	}
	huge := int64(1) << 62
	if got := (&RetryPolicy{Backoff: &Backoff{MaxDuration: "100000h", Factor: &huge}}).Delay(5); got != 100000*time.Hour {
		t.Errorf("Delay with a huge factor = %s, want the cap without overflow", got)
	}
	p := &RetryPolicy{Limit: 2}
	if !p.ShouldRetry(0) || !p.ShouldRetry(1) || p.ShouldRetry(2) {
		t.Error("ShouldRetry does not stop after limit retries")
	}
	if (*RetryPolicy)(nil).ShouldRetry(0) {
		t.Error("a nil policy retries")
	}
	if !(&RetryPolicy{Limit: -1}).ShouldRetry(1000) {
		t.Error("an unlimited policy stops")
	}
}
