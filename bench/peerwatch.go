package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// peerWatch samples a peer's idle cost over a window (Flux's or Argo CD's,
// with Ferry's worker stopped): CPU and memory of the peer's processes,
// the API server's CPU and requests, and the peer's app reconciles.
type peerWatch struct {
	e      *Env
	region string
	// procs are the peer's processes by name; count is its app reconciles
	// so far (a counter of its metrics); exited says whether it died.
	procs  map[string]int
	count  func() (float64, error)
	exited func() error

	window       time.Duration
	cpu, rss     []float64            // the peer's processes together
	cpuOf        map[string][]float64 // each process's
	apiserverCPU []float64
	reconciles   float64
	delta        apiCounts
	apiDeltas    []apiCounts // per apiInterval
	recDeltas    []float64
	apiSecs      []float64
	git0, git1   int64
}

func (w *peerWatch) run(ctx context.Context, window time.Duration) error {
	e := w.e
	const apiserver = "\x00apiserver" // not a name a peer's process has
	procs := map[string]int{apiserver: e.Stack.Pids()[w.region+"-apiserver"]}
	for name, pid := range w.procs {
		procs[name] = pid
	}
	w.cpuOf = map[string][]float64{}
	prev, err := sampleProcs(procs)
	if err != nil {
		return err
	}
	rec0, err := w.count()
	if err != nil {
		return err
	}
	api0, err := e.apiRequests(ctx, w.region)
	if err != nil {
		return err
	}
	w.git0 = e.gitLogOffset()
	began := time.Now()
	recPrev, apiPrev, apiAt := rec0, api0, began
	for time.Since(began) < window {
		sleep(ctx, procInterval)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := w.exited(); err != nil {
			return err
		}
		now, err := sampleProcs(procs)
		if err != nil {
			return err
		}
		cpu, rss := 0.0, 0.0
		for name := range w.procs {
			c := CPUCores(prev[name], now[name])
			w.cpuOf[name] = append(w.cpuOf[name], c)
			cpu += c
			rss += float64(now[name].RSS) / (1 << 20)
		}
		w.cpu, w.rss = append(w.cpu, cpu), append(w.rss, rss)
		w.apiserverCPU = append(w.apiserverCPU, CPUCores(prev[apiserver], now[apiserver]))
		prev = now
		if time.Since(apiAt) >= apiInterval-time.Second {
			rec, err := w.count()
			if err != nil {
				return err
			}
			api, err := e.apiRequests(ctx, w.region)
			if err != nil {
				return err
			}
			w.apiDeltas = append(w.apiDeltas, api.sub(apiPrev))
			w.recDeltas = append(w.recDeltas, rec-recPrev)
			w.apiSecs = append(w.apiSecs, time.Since(apiAt).Seconds())
			recPrev, apiPrev, apiAt = rec, api, time.Now()
		}
	}
	w.window = time.Since(began)
	w.git1 = e.gitLogOffset()
	rec1, err := w.count()
	if err != nil {
		return err
	}
	api1, err := e.apiRequests(ctx, w.region)
	if err != nil {
		return err
	}
	w.reconciles, w.delta = rec1-rec0, api1.sub(api0)
	return nil
}

// perReconcile is, per apiInterval, the requests that keep counts (nil:
// every kind) less the background rate, over the peer's reconciles.
func (w *peerWatch) perReconcile(keep func(apiKey) bool, background float64) []float64 {
	var out []float64
	for i, d := range w.apiDeltas {
		if w.recDeltas[i] > 0 {
			out = append(out, (d.total(keep)-background*w.apiSecs[i])/w.recDeltas[i])
		}
	}
	return out
}

// msPerReconcile is the peer's CPU over the window per reconcile, in ms.
func (w *peerWatch) msPerReconcile() float64 {
	return Summarize(w.cpu).Mean * w.window.Seconds() * 1000 / max(w.reconciles, 1)
}

// peerIdleRatios divides Ferry's idle figures of the same fleet by a
// peer's: medians, since the windows follow each other and are not pairs.
// Their IDs start with tag; repro reproduces them.
func peerIdleRatios(ferryIdle *Section, n int, peer peerRatioText, tag, repro string, cpu, rss, api *Figure) []*Figure {
	if ferryIdle == nil {
		return nil
	}
	ferry := map[string]*Figure{}
	for _, fg := range ferryIdle.Figures {
		ferry[strings.TrimPrefix(fg.ID, fmt.Sprintf("idle-%d-", n))] = fg
	}
	var out []*Figure
	// ferryMedian is Ferry's median of a figure, if it was measured.
	ferryMedian := func(id string) (float64, bool) {
		fg, ok := ferry[id]
		if !ok || fg.Summary().N == 0 {
			return 0, false
		}
		return fg.Summary().Median, true
	}
	ratio := func(id, title, what string, ferryIDs []string, theirs *Figure) {
		sum := 0.0
		for _, fid := range ferryIDs {
			m, ok := ferryMedian(fid)
			if !ok {
				return
			}
			sum += m
		}
		if m := theirs.Summary().Median; theirs.Summary().N > 0 && m > 0 {
			out = append(out, &Figure{ID: tag + "-" + id, Title: fmt.Sprintf("Idle %d apps: %s", n, title), Unit: "×",
				Samples: []float64{max(sum, 0) / m}, What: what, Reproduce: repro})
		}
	}
	ratio("ratio-cpu", "CPU ratio, Ferry worker / "+peer.Peer, say(peer, "what-ratio-cpu"),
		[]string{"worker-cpu"}, cpu)
	ratio("ratio-cpu-temporal", "CPU ratio, Ferry worker + Temporal / "+peer.Peer, say(peer, "what-ratio-cpu-temporal"),
		[]string{"worker-cpu", "temporal-cpu"}, cpu)
	ratio("ratio-rss", "memory ratio, Ferry worker / "+peer.Peer, say(peer, "what-ratio-rss"),
		[]string{"worker-rss"}, rss)
	ratio("ratio-api", "API requests per reconcile ratio, Ferry / "+peer.Peer, say(peer, "what-ratio-api"),
		[]string{"api"}, api)
	return out
}

// peerRatioText is the data of text/peer_ratio.md.tmpl: the peer's name,
// its processes measured, and what one of its reconciles is.
type peerRatioText struct{ Peer, Procs, Reconcile string }

func (peerRatioText) textFile() string { return "peer_ratio" }
