package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// The idle floor: what Temporal itself costs per idle poll, with nothing of
// Ferry's in it. Bare workflows loop as an idle app does — one timer, and
// the workflow task it wakes, in which a local activity answers a small
// result (the resolve's marker) — on an SDK worker in the bench's process,
// so that the server's CPU per loop is the least any design with one timer
// per app and poll pays on this Temporal. The timer alone (no local
// activity) is measured too.
const (
	floorQueue    = "ferry-bench-floor"
	floorWorkflow = "IdleFloor"
	floorActivity = "IdleFloorResolve"
)

// floorResult stands for a ResolveResult: a SHA and a region's workers.
type floorResult struct {
	SHA     string            `json:"sha"`
	Workers map[string]string `json:"workers,omitempty"`
}

// floorLoops counts the loops the floor's workflows ran (not replayed).
var floorLoops atomic.Int64

// idleFloorWorkflow waits offset first, so that the fleet's loops spread
// over the poll interval as the apps' jitter spreads theirs.
func idleFloorWorkflow(ctx workflow.Context, poll, offset time.Duration, local bool) error {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	if err := workflow.Sleep(ctx, offset); err != nil {
		return err
	}
	for {
		if local {
			var out floorResult
			if err := workflow.ExecuteLocalActivity(ctx, floorActivity, "https://git.example/repo.git").Get(ctx, &out); err != nil {
				return err
			}
		}
		if !workflow.IsReplaying(ctx) {
			floorLoops.Add(1)
		}
		if err := workflow.Sleep(ctx, poll); err != nil {
			return err
		}
	}
}

func idleFloorResolve(context.Context, string) (floorResult, error) {
	return floorResult{SHA: strings.Repeat("a", 40), Workers: map[string]string{"us-east-1": "0123456789abcdef"}}, nil
}

// IdleFloor runs the floor's two variants on e's Temporal, one after the
// other: FloorApps workflows each looping every FloorPoll, watched as
// long as the idle scenario watches a fleet.
func IdleFloor(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	c, err := client.DialContext(ctx, client.Options{
		HostPort: e.Stack.TemporalAddress, Namespace: e.Stack.Namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		// As ferry-worker's default (--temporal-compression none).
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}},
	})
	if err != nil {
		return fmt.Errorf("idle floor: connect to Temporal: %w", err)
	}
	defer c.Close()
	w := worker.New(c, floorQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(idleFloorWorkflow, workflow.RegisterOptions{Name: floorWorkflow})
	w.RegisterActivityWithOptions(idleFloorResolve, activity.RegisterOptions{Name: floorActivity})
	if err := w.Start(); err != nil {
		return fmt.Errorf("idle floor: start the worker: %w", err)
	}
	defer w.Stop()

	temporalIs, procs := e.temporalProcs()
	d := floorText{Apps: cfg.FloorApps, TemporalIs: temporalIs, Poll: cfg.FloorPoll.String(),
		Window: max(cfg.IdleWindow, 2*cfg.FloorPoll+cfg.FloorPoll/5).String(), ProcInterval: procInterval.String()}
	for _, v := range []struct {
		id    string
		local bool
	}{{"timer", false}, {"timer-la", true}} {
		m, err := e.floorVariant(ctx, c, procs, v.id, v.local)
		if err != nil {
			return err
		}
		tag := "idle-floor-" + v.id
		if e.Stack.Temporal == devenv.TemporalCluster {
			tag = "idle-floor-cluster-" + v.id
		}
		d.Local = v.local
		d.Rows = append(d.Rows, floorRow{Local: v.local, Rate: m.rate, Cores: m.cores, ServerMs: m.serverMs, PerLoopMedian: Summarize(m.perLoop).Median, WorkerMs: m.workerMs, Events: m.events})
		repro := cfg.reproduce(sec.Scenario, fmt.Sprintf("-floor-apps %d -floor-poll %s -idle-window %s", cfg.FloorApps, cfg.FloorPoll, cfg.IdleWindow))
		sec.Figures = append(sec.Figures, &Figure{ID: tag, Title: fmt.Sprintf("Idle floor (%s): Temporal CPU per loop", say(d, "loop")), Unit: "ms",
			Samples: []float64{m.serverMs}, Reproduce: repro,
			What: say(d, "what")})
	}
	sec.Text = say(d, "text")
	return nil
}

// floorText is the data of text/idlefloor.md.tmpl.
type floorText struct {
	Apps                                   int
	TemporalIs, Poll, Window, ProcInterval string
	// Rows are the variants measured; Local is the one a figure
	// describes.
	Rows  []floorRow
	Local bool
}

// floorRow is one variant's measures: Local, with a local activity in
// each loop's workflow task.
type floorRow struct {
	Local                                          bool
	Rate, Cores, ServerMs, PerLoopMedian, WorkerMs float64
	Events                                         float64
}

func (floorText) textFile() string { return "idlefloor" }

// temporalProcs are the processes of e's Temporal, by name: the dev
// server's one, or a cluster's services and its PostgreSQL (not its UI).
func (e *Env) temporalProcs() (string, map[string]int) {
	procs := map[string]int{}
	for name, pid := range e.Stack.Pids() {
		if (name == "temporal" || strings.HasPrefix(name, "temporal-") || name == "postgres") && name != "temporal-ui" {
			procs[name] = pid
		}
	}
	d := stackText{Cluster: e.Stack.Temporal == devenv.TemporalCluster, TemporalProcs: slices.Sorted(maps.Keys(procs))}
	return say(d, "temporal"), procs
}

type floorMeasure struct {
	rate, cores, serverMs, workerMs, events float64
	perLoop                                 []float64
}

// floorVariant starts the workflows of one variant, lets them settle for
// one poll, watches them, and terminates them.
func (e *Env) floorVariant(ctx context.Context, c client.Client, procs map[string]int, id string, local bool) (floorMeasure, error) {
	cfg := e.Cfg
	var m floorMeasure
	e.logf("idle floor %s: starting %d workflows", id, cfg.FloorApps)
	ids := make([]string, cfg.FloorApps)
	offsets := make(map[string]time.Duration, len(ids))
	for i := range ids {
		ids[i] = fmt.Sprintf("floor/%s/%d", id, i)
		offsets[ids[i]] = time.Duration(i) * cfg.FloorPoll / time.Duration(len(ids))
	}
	if err := e.forApps(ctx, ids, func(ctx context.Context, wid string) error {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: floorQueue}, floorWorkflow, cfg.FloorPoll, offsets[wid], local)
		return err
	}); err != nil {
		return m, fmt.Errorf("idle floor: start: %w", err)
	}
	defer func() {
		_ = e.forApps(context.WithoutCancel(ctx), ids, func(ctx context.Context, wid string) error {
			return c.TerminateWorkflow(ctx, wid, "", "idle floor measured")
		})
	}()
	sleep(ctx, 2*cfg.FloorPoll+cfg.FloorPoll/5) // the offsets, then one loop each
	// The worker is this process alone: its children are the stack.
	self0, err := SampleProc(os.Getpid())
	if err != nil {
		return m, err
	}
	prev, err := sampleProcs(procs)
	if err != nil {
		return m, err
	}
	first, began := prev, time.Now()
	loops0 := floorLoops.Load()
	events0, err := e.floorEvents(ctx, c, ids)
	if err != nil {
		return m, err
	}
	watch := max(cfg.IdleWindow, 2*cfg.FloorPoll+cfg.FloorPoll/5)
	lastLoops := loops0
	for time.Since(began) < watch {
		sleep(ctx, procInterval)
		if ctx.Err() != nil {
			return m, ctx.Err()
		}
		now, err := sampleProcs(procs)
		if err != nil {
			return m, err
		}
		loops := floorLoops.Load()
		if d := loops - lastLoops; d > 0 {
			var cpu time.Duration
			for name := range procs {
				cpu += now[name].CPU - prev[name].CPU
			}
			m.perLoop = append(m.perLoop, float64(cpu)/float64(time.Millisecond)/float64(d))
		}
		prev, lastLoops = now, loops
	}
	window := time.Since(began)
	loops := float64(floorLoops.Load() - loops0)
	events1, err := e.floorEvents(ctx, c, ids)
	if err != nil {
		return m, err
	}
	var serverCPU time.Duration
	for name := range procs {
		serverCPU += prev[name].CPU - first[name].CPU
	}
	m.rate = loops / window.Seconds()
	m.cores = float64(serverCPU) / float64(window)
	m.serverMs = float64(serverCPU) / float64(time.Millisecond) / max(loops, 1)
	self1, err := SampleProc(os.Getpid())
	if err != nil {
		return m, err
	}
	m.workerMs = float64(self1.CPU-self0.CPU) / float64(time.Millisecond) / max(loops, 1)
	m.events = float64(events1-events0) / max(loops, 1)
	e.logf("idle floor %s: %.1f loops/s, Temporal %.3f cores, %.2f ms per loop", id, m.rate, m.cores, m.serverMs)
	return m, nil
}

// floorEvents is the sum of the workflows' history lengths.
func (e *Env) floorEvents(ctx context.Context, c client.Client, ids []string) (int64, error) {
	var total atomic.Int64
	err := e.forApps(ctx, ids, func(ctx context.Context, wid string) error {
		d, err := c.DescribeWorkflowExecution(ctx, wid, "")
		if err != nil {
			return err
		}
		total.Add(d.GetWorkflowExecutionInfo().GetHistoryLength())
		return nil
	})
	return total.Load(), err
}
