package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// sandboxCounts serves a render sandbox's counts (sandbox.Renderer.Counts)
// as counters, read at each scrape: how often a render paid a sandbox's
// start, how often a sandbox that waited for its checkout spared one, and
// why those that waited ended.
type sandboxCounts struct {
	counts                  func() sandbox.Counts
	started, reused, ending *prometheus.Desc
}

func newSandboxCounts(counts func() sandbox.Counts) *sandboxCounts {
	return &sandboxCounts{counts: counts,
		started: prometheus.NewDesc("ferry_render_sandbox_starts_total",
			"Render sandboxes started, for the pool or for one render.", nil, nil),
		reused: prometheus.NewDesc("ferry_render_sandbox_reuses_total",
			"Renders served by a sandbox that rendered the same checkout before (--render-sandbox-reuse): each one a sandbox's start spared.", nil, nil),
		ending: prometheus.NewDesc("ferry_render_sandbox_reuse_ends_total",
			"Sandboxes that could serve their checkout's next render and ended, by reason: idle (no render of it came soon), renders (--render-sandbox-reuse reached), busy (a quarter of its CPU time used), failed, full (as many wait as may), closed.",
			[]string{"reason"}, nil),
	}
}

// metricKind is the type the metrics reference names.
func (c *sandboxCounts) metricKind() string { return "counter" }

func (c *sandboxCounts) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.started
	ch <- c.reused
	ch <- c.ending
}

func (c *sandboxCounts) Collect(ch chan<- prometheus.Metric) {
	n := c.counts()
	ch <- prometheus.MustNewConstMetric(c.started, prometheus.CounterValue, float64(n.Started))
	ch <- prometheus.MustNewConstMetric(c.reused, prometheus.CounterValue, float64(n.Reused))
	for _, reason := range sandbox.EndReasons {
		ch <- prometheus.MustNewConstMetric(c.ending, prometheus.CounterValue, float64(n.Ended[reason]), reason)
	}
}
