package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/pipeline"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// Goals of issue 14 for the render sandbox.
const (
	// sandboxWarmGoal: a render in a warm sandbox of the pool takes at most
	// this many times the in-process render of the same source.
	sandboxWarmGoal = 1.5
	// sandboxColdGoal: a render in a sandbox started for it, in seconds.
	sandboxColdGoal = 0.3
)

// SandboxRender renders the checkout of a commit of CompareResources
// resources in the benchmark's process (render.Renderer, as --render-sandbox
// none does), in a warm sandbox of a pool (the pool full before each
// render, as a worker's is between renders), and in a sandbox started for
// the render (a pool of none), with the worker's binary as the renderer,
// in each sandbox installed: gVisor (runsc), process (bwrap). The three
// take turns, run by run.
func SandboxRender(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	repo, err := e.sizedRepo(ctx, cfg.CompareResources)
	if err != nil {
		return err
	}
	p, err := e.newPipeline("sandbox", pipeline.Cache{})
	if err != nil {
		return err
	}
	root, release, err := p.Repos.Checkout(ctx, repo.URL, repo.Commit.SHA)
	if err != nil {
		return err
	}
	defer release()
	src, opts := benchSource(repo.URL), render.Options{AppName: "bench", Namespace: "bench", Revision: repo.Commit.SHA}
	settings := &render.Renderer{Limits: render.DefaultLimits()}
	renderWith := func(r manifests.SourceRenderer) (float64, error) {
		d, err := timeIt(ctx, func(ctx context.Context) error {
			res, err := r.Render(ctx, root, src, opts)
			if err == nil && len(res.Objects) != cfg.CompareResources {
				err = fmt.Errorf("rendered %d objects, want %d", len(res.Objects), cfg.CompareResources)
			}
			return err
		})
		return d.Seconds(), err
	}

	repro := cfg.reproduce(ScenarioSandbox, fmt.Sprintf("-sandbox-runs %d -compare-resources %d", cfg.SandboxRuns, cfg.CompareResources))
	d := sandboxText{Resources: cfg.CompareResources, Mix: resourceMix(cfg.CompareResources), WarmGoal: sandboxWarmGoal, ColdGoal: sandboxColdGoal}
	var inProcess []float64
	type mode struct {
		mode                     sandbox.Mode
		name                     string // mode, and the runsc platform
		warm, cold, share        *sandbox.Renderer
		pool, once, start, again []float64
	}
	var modes []*mode
	// gVisor on each platform that works without KVM, with the runsc of
	// the tools cache where it has one, as the stack's workers run it.
	runsc := filepath.Join(e.Stack.ToolsBin, "runsc")
	if _, err := exec.LookPath(runsc); err != nil {
		runsc = "runsc"
	}
	type variant struct {
		mode            sandbox.Mode
		platform, runsc string
		suffix          string
	}
	variants := []variant{{sandbox.ModeGVisor, "systrap", runsc, ""}, {sandbox.ModeGVisor, "ptrace", runsc, ""}}
	// The system's runsc (Debian's) too, where it is another one: what a
	// worker without the tools cache runs.
	if system, err := exec.LookPath("runsc"); err == nil && !sameFile(system, runsc) {
		variants = append(variants, variant{sandbox.ModeGVisor, "ptrace", system, "-system"})
	}
	variants = append(variants, variant{mode: sandbox.ModeProcess})
	for _, v := range variants {
		m := v.mode
		name := string(m)
		if v.platform != "" {
			name += "-" + v.platform + v.suffix
		}
		tool := map[sandbox.Mode]string{sandbox.ModeGVisor: v.runsc, sandbox.ModeProcess: "bwrap"}[m]
		if _, err := exec.LookPath(tool); err != nil {
			d.Mode, d.Tool = name, tool
			sec.Text += say(d, "not-installed")
			continue
		}
		dir, err := e.tempDir("sandbox-" + name)
		if err != nil {
			return err
		}
		// Each renderer as the worker builds it (started, probed, its pool
		// warmed), with the worker's binary as the renderer, on this
		// platform alone. The pool is on the file system of the
		// checkouts, as a worker's state directory is beside its clone
		// cache.
		renderer := func(role string, pool, reuse int) (*sandbox.Renderer, error) {
			r, err := pipeline.NewRenderer(settings, pipeline.Sandbox{Mode: m, Runsc: v.runsc, RunscPlatform: v.platform,
				Binary: filepath.Join(cfg.BinDir, "ferry-worker"), StateDir: filepath.Join(dir, role), Pool: pool, Reuse: reuse})
			if err != nil {
				return nil, err
			}
			return r.SourceRenderer.(*sandbox.Renderer), nil
		}
		// The warm render is a new commit's first: no sandbox rendered
		// its checkout yet.
		warm, err := renderer("warm", 1, 1)
		if err != nil {
			d.Mode, d.Err = name, err.Error()
			sec.Text += say(d, "not-working")
			continue
		}
		defer warm.Close()
		cold, err := renderer("cold", 0, 1)
		if err != nil {
			return err
		}
		defer cold.Close()
		share, err := renderer("share", 1, 2*cfg.SandboxRuns+1)
		if err != nil {
			return err
		}
		defer share.Close()
		modes = append(modes, &mode{mode: m, name: name, warm: warm, cold: cold, share: share})
	}
	for i := range cfg.SandboxRuns {
		d, err := renderWith(settings)
		if err != nil {
			return fmt.Errorf("in-process render: %w", err)
		}
		inProcess = append(inProcess, d)
		line := fmt.Sprintf("sandbox run %d: in-process %.3fs", i, d)
		for _, m := range modes {
			if err := waitPoolFull(ctx, m.warm); err != nil {
				return err
			}
			d, err := renderWith(m.warm)
			if err != nil {
				return fmt.Errorf("render in a warm %s sandbox: %w", m.name, err)
			}
			m.pool = append(m.pool, d)
			if d, err = renderWith(m.cold); err != nil {
				return fmt.Errorf("render in a cold %s sandbox: %w", m.name, err)
			}
			m.once = append(m.once, d)
			began := time.Now()
			if err := m.cold.Probe(ctx); err != nil {
				return fmt.Errorf("start a %s sandbox: %w", m.name, err)
			}
			m.start = append(m.start, time.Since(began).Seconds())
			// The next app of the same commit: a sandbox that rendered
			// the checkout (just before, so that it still waits) renders
			// it again.
			if _, err := renderWith(m.share); err != nil {
				return fmt.Errorf("render in a shared %s sandbox: %w", m.name, err)
			}
			if d, err = renderWith(m.share); err != nil {
				return fmt.Errorf("render in a shared %s sandbox: %w", m.name, err)
			}
			m.again = append(m.again, d)
			line += fmt.Sprintf(", %s warm %.3fs cold %.3fs start %.3fs again %.3fs", m.name, m.pool[i], m.once[i], m.start[i], m.again[i])
		}
		e.logf("%s", line)
	}

	sec.Figures = append(sec.Figures, &Figure{ID: "sandbox-in-process", Title: fmt.Sprintf("Render %d resources, in-process", cfg.CompareResources),
		Unit: "s", Samples: inProcess, Reproduce: repro, What: say(d, "what-in-process")})
	for _, m := range modes {
		ratios := make([]float64, len(m.pool))
		for i := range m.pool {
			ratios[i] = m.pool[i] / inProcess[i]
		}
		d.Mode = m.name
		sec.Figures = append(sec.Figures,
			&Figure{ID: "sandbox-" + m.name + "-warm", Title: fmt.Sprintf("Render %d resources, %s, warm pool", cfg.CompareResources, m.name),
				Unit: "s", Samples: m.pool, Reproduce: repro, What: say(d, "what-warm")},
			&Figure{ID: "sandbox-" + m.name + "-warm-ratio", Title: fmt.Sprintf("Warm %s / in-process", m.name),
				Unit: "×", Samples: ratios, Reproduce: repro, What: say(d, "what-warm-ratio")},
			&Figure{ID: "sandbox-" + m.name + "-cold", Title: fmt.Sprintf("Render %d resources, %s, sandbox started for it", cfg.CompareResources, m.name),
				Unit: "s", Samples: m.once, Reproduce: repro, What: say(d, "what-cold")},
			&Figure{ID: "sandbox-" + m.name + "-again", Title: fmt.Sprintf("Render %d resources, %s, again in its sandbox", cfg.CompareResources, m.name),
				Unit: "s", Samples: m.again, Reproduce: repro, What: say(d, "what-again")},
			&Figure{ID: "sandbox-" + m.name + "-start", Title: fmt.Sprintf("Cold start of a %s sandbox", m.name),
				Unit: "s", Samples: m.start, Reproduce: repro, What: say(d, "what-start")},
		)
		r, c, st := Summarize(ratios), Summarize(m.once), Summarize(m.start)
		d.Rows = append(d.Rows, sandboxRow{Name: m.name, Ratio: r.Median, RatioMet: r.Median <= sandboxWarmGoal,
			Start: st.Median, StartP95: st.P95, StartMet: st.Median < sandboxColdGoal, Cold: c.Median})
	}
	d.InProcess = Summarize(inProcess).Median
	sec.Text += say(d, "text")
	return nil
}

// sandboxText is the data of text/sandbox.md.tmpl.
type sandboxText struct {
	Resources          int
	Mix                string // resourceMix of Resources
	WarmGoal, ColdGoal float64
	// Mode names the sandbox of a figure or a note; Tool and Err say why
	// it was not measured.
	Mode, Tool, Err string
	// InProcess is the in-process render's median, in seconds.
	InProcess float64
	Rows      []sandboxRow
}

// sandboxRow is one sandbox's line of the goals' table: medians in
// seconds, and whether they met issue 14's goals.
type sandboxRow struct {
	Name                   string
	Ratio, Start, StartP95 float64
	Cold                   float64
	RatioMet, StartMet     bool
}

func (sandboxText) textFile() string { return "sandbox" }

// waitPoolFull starts r's pool and waits until its sandboxes are started.
func waitPoolFull(ctx context.Context, r *sandbox.Renderer) error {
	r.Warm()
	for r.Idle() < r.Pool {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the %s pool did not fill: %w", r.Runner.Mode(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// sameFile tells whether paths a and b are one file (after symlinks).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
