package bench

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/ferry-gitops/ferry/contract"
)

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// FanOut measures the time from `ferry app apply` of an app of
// FanoutResources resources to Synced in every region it targets, for one
// region and for all three, alternately, and gives their ratio per pair.
// Issue 6's goal is a ratio of at most 1.3.
func FanOut(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	regions := e.Stack.Regions
	if len(regions) < 2 {
		return fmt.Errorf("fan-out needs a stack of several regions, this one has %d", len(regions))
	}
	repo, err := e.sizedRepo(ctx, cfg.FanoutResources)
	if err != nil {
		return err
	}
	w, err := e.StartWorker(ctx, "fanout")
	if err != nil {
		return err
	}
	defer w.Stop()

	// One app first, not counted: it clones the repo and renders the
	// commit into the manifest cache, which every run after it reuses.
	var busyOne, busyThree []float64
	// Core-seconds each command spent per run.
	cpuOne, cpuThree := map[string][]float64{}, map[string][]float64{}
	// From the histories: each region's Sync activity, start to close, and
	// how far apart the regions' Syncs were scheduled.
	var syncOne, syncThree, scheduleSpread []float64
	run := func(name string, rs []string) (time.Duration, float64, error) {
		spec := appSpec{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: rs, Poll: time.Hour}
		cpu0, procs0 := machineCPU(), cpuByCommand()
		began := time.Now()
		if _, err := e.applyApps(ctx, []appSpec{spec}, 1); err != nil {
			return 0, 0, err
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		at, v, err := e.waitSynced(wctx, name, repo.Commit.SHA, rs, false, 100*time.Millisecond)
		if err != nil {
			return 0, 0, err
		}
		op := 0.0
		if s := v.Status.OperationState; s != nil && s.FinishedAt != nil {
			op = s.FinishedAt.Sub(s.StartedAt).Seconds()
		}
		if spans, err := e.activitySpans(ctx, name, contract.ActivitySync); err == nil && len(spans) > 0 {
			first, last := spans[0].Scheduled, spans[0].Scheduled
			for _, sp := range spans {
				if !sp.Started.IsZero() && !sp.Closed.IsZero() {
					d := sp.Closed.Sub(sp.Started).Seconds()
					if len(rs) == 1 {
						syncOne = append(syncOne, d)
					} else {
						syncThree = append(syncThree, d)
					}
				}
				first, last = minTime(first, sp.Scheduled), maxTime(last, sp.Scheduled)
			}
			if len(rs) > 1 {
				scheduleSpread = append(scheduleSpread, last.Sub(first).Seconds()*1000)
			}
		}
		spent := cpuSpent(procs0, cpuByCommand())
		for cmd, d := range spent {
			if len(rs) == 1 {
				cpuOne[cmd] = append(cpuOne[cmd], d)
			} else {
				cpuThree[cmd] = append(cpuThree[cmd], d)
			}
		}
		if busy := busyCores(cpu0, machineCPU()); len(rs) == 1 {
			busyOne = append(busyOne, busy)
		} else {
			busyThree = append(busyThree, busy)
		}
		return at.Sub(began), op, nil
	}
	if _, _, err := run("fan-warmup", regions[:1]); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	busyOne, syncOne = nil, nil
	clear(cpuOne)

	var one, three, opOne, opThree, floor []float64
	for i := range cfg.FanoutRuns {
		order := []int{1, len(regions), 0}
		if i%2 == 1 {
			order = []int{0, len(regions), 1}
		}
		for _, k := range order {
			if k == 0 {
				// The floor: the same objects applied by kubectl into every
				// region at once, one kubectl run each, and waited for.
				d, err := e.parallelKubectl(ctx, regions, fmt.Sprintf("fan-floor-%d", i), repo.Path("app"))
				if err != nil {
					return err
				}
				floor = append(floor, d.Seconds())
				e.logf("fan-out run %d, kubectl in %d regions at once: %s", i, len(regions), d.Round(time.Millisecond))
				continue
			}
			d, op, err := run(fmt.Sprintf("fan-%dr-%d", k, i), regions[:k])
			if err != nil {
				return err
			}
			if k == 1 {
				one, opOne = append(one, d.Seconds()), append(opOne, op)
			} else {
				three, opThree = append(three, d.Seconds()), append(opThree, op)
			}
			e.logf("fan-out run %d, %d region(s): %s", i, k, d.Round(time.Millisecond))
		}
	}

	repro := cfg.reproduce(ScenarioFanout, fmt.Sprintf("-fanout-runs %d -fanout-resources %d", cfg.FanoutRuns, cfg.FanoutResources))
	d := fanoutText{Mix: resourceMix(cfg.FanoutResources), Resources: cfg.FanoutResources, Regions: regions, First: regions[0], N: len(regions),
		OpOne: Summarize(opOne).Median, OpMany: Summarize(opThree).Median, Cores: runtime.NumCPU(),
		BusyOne: Summarize(busyOne).Median, BusyMany: Summarize(busyThree).Median, Spread: Summarize(scheduleSpread).Median,
		SyncMany: Summarize(syncThree).Median, SyncOne: Summarize(syncOne).Median}
	d.cpuTable(cpuOne, cpuThree, Summarize(one).Median)
	sec.Figures = append(sec.Figures,
		&Figure{ID: "fanout-1r", Title: "Fan-out, 1 region", Unit: "s", Samples: one, Reproduce: repro, What: say(d, "what-one")},
		&Figure{ID: fmt.Sprintf("fanout-%dr", len(regions)), Title: fmt.Sprintf("Fan-out, %d regions", len(regions)), Unit: "s", Samples: three, Reproduce: repro,
			What: say(d, "what-many")},
		&Figure{ID: "fanout-ratio", Title: fmt.Sprintf("Fan-out ratio, %d regions / 1", len(regions)), Unit: "×", Samples: ratios(three, one), Reproduce: repro,
			What: say(d, "what-ratio"), Goal: &Goal{Max: 1.3, Source: "issue 6"}},
		&Figure{ID: "fanout-floor", Title: fmt.Sprintf("Fan-out floor, kubectl in %d regions at once", len(regions)), Unit: "s", Samples: floor, Reproduce: repro,
			What: say(d, "what-floor")},
		&Figure{ID: "fanout-floor-ratio", Title: fmt.Sprintf("Fan-out ratio, Ferry in %d regions / kubectl in %d regions", len(regions), len(regions)), Unit: "×", Samples: ratios(three, floor), Reproduce: repro,
			Goal: goal(goalFanoutFloor), What: say(d, "what-floor-ratio")},
	)
	sec.Text = say(d, "text")
	return nil
}

// fanoutText is the data of text/fanout.md.tmpl: medians of the runs, in
// seconds, cores and milliseconds (Spread).
type fanoutText struct {
	Mix                 string // resourceMix of Resources
	Resources, N, Cores int
	Regions             []string
	First               string // the one region
	OpOne, OpMany       float64
	BusyOne, BusyMany   float64
	Spread              float64
	SyncOne, SyncMany   float64
	// CPU is where it went by process, busiest first; the sums, the rest
	// of the machine, and the least time N regions take on these cores
	// (MinTime, and MinRatio times OneTime, the one-region median).
	CPU                                []cpuRow
	SumOne, SumMany, RestOne, RestMany float64
	Factor, MinTime, MinRatio, OneTime float64
}

// cpuRow is a process's median core-seconds per run, one region and N.
type cpuRow struct {
	Name      string
	One, Many float64
}

func (fanoutText) textFile() string { return "fanout" }

// stackCommands are the processes of the stack and Ferry, by the name the
// kernel gives them (15 characters at most).
var stackCommands = []string{"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kwok", "temporal", "redis-server", "ferry-worker"}

// cpuTable is where the machine's CPU went during the runs: the median
// core-seconds each of the stack's processes spent per run, busiest first,
// then the rest of the machine; and what that means for the n-region time
// on this machine's cores against the one-region time, oneTime seconds.
func (d *fanoutText) cpuTable(one, three map[string][]float64, oneTime float64) {
	med := func(m map[string][]float64, cmd string) float64 { return Summarize(m[cmd]).Median }
	rest := func(m map[string][]float64) []float64 {
		var out []float64
		for i := 0; ; i++ {
			sum, any := 0.0, false
			for cmd, v := range m {
				if i < len(v) {
					any = true
					if !slices.Contains(stackCommands, cmd) {
						sum += v[i]
					}
				}
			}
			if !any {
				return out
			}
			out = append(out, sum)
		}
	}
	cmds := slices.Clone(stackCommands)
	slices.SortStableFunc(cmds, func(a, b string) int { return cmp.Compare(med(three, b), med(three, a)) })
	for _, cmd := range cmds {
		d.CPU = append(d.CPU, cpuRow{Name: cmd, One: med(one, cmd), Many: med(three, cmd)})
		d.SumOne, d.SumMany = d.SumOne+med(one, cmd), d.SumMany+med(three, cmd)
	}
	d.RestOne, d.RestMany = Summarize(rest(one)).Median, Summarize(rest(three)).Median
	cores := float64(runtime.NumCPU())
	d.Factor, d.MinTime, d.OneTime = d.SumMany/d.SumOne, d.SumMany/cores, oneTime
	d.MinRatio = d.MinTime / oneTime
}
