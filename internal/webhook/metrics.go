package webhook

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the webhook's Prometheus metrics.
type Metrics struct {
	requests   *prometheus.CounterVec
	dedupeHits prometheus.Counter
	signals    prometheus.Counter
	failures   *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg (none if nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ferry_webhook_requests_total",
			Help: "Webhook deliveries by provider, event (push, tag_push, ping, other) and result.",
		}, []string{"provider", "event", "result"}),
		dedupeHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ferry_webhook_dedupe_hits_total",
			Help: "Pushes dropped as repeats of one delivered within the dedupe window.",
		}),
		signals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ferry_webhook_refresh_signals_total",
			Help: "Refresh signals sent to apps for pushes.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ferry_webhook_failures_total",
			Help: "Pushes whose processing failed, by stage (lookup: listing the apps; signal: signalling one app; poll: a repository's ls-remote in the repo poll).",
		}, []string{"stage"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.dedupeHits, m.signals, m.failures)
	}
	return m
}
