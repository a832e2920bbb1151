package sandbox

import "sync/atomic"

// Why a sandbox that rendered its checkout and could serve the next render
// of it (renderer_reuse.go) ended.
const (
	EndIdle    = "idle"    // no render of its checkout came within reuseIdle
	EndRenders = "renders" // it served Renderer.Reuse renders
	EndBusy    = "busy"    // its renders took a quarter of its CPU time
	EndFailed  = "failed"  // a render in it failed, or it died
	EndFull    = "full"    // as many sandboxes waited as may
	EndClosed  = "closed"  // the renderer closed
)

// EndReasons are the reasons above, in the order metrics list them.
var EndReasons = [...]string{EndIdle, EndRenders, EndBusy, EndFailed, EndFull, EndClosed}

// Counts are what a Renderer's sandboxes did since it began, for the
// worker's metrics: the sandboxes it started (pooled or for one render),
// the renders a waiting sandbox served (each one a start spared), and why
// the sandboxes that could wait ended, by reason.
type Counts struct {
	Started, Reused int64
	Ended           map[string]int64
}

// counters are a Renderer's Counts as they grow.
type counters struct {
	started, reused atomic.Int64
	ended           [len(EndReasons)]atomic.Int64
}

func (c *counters) end(reason string) {
	for i, r := range EndReasons {
		if r == reason {
			c.ended[i].Add(1)
		}
	}
}

// Counts are r's counts so far.
func (r *Renderer) Counts() Counts {
	out := Counts{Started: r.counts.started.Load(), Reused: r.counts.reused.Load(), Ended: map[string]int64{}}
	for i, reason := range EndReasons {
		out.Ended[reason] = r.counts.ended[i].Load()
	}
	return out
}
