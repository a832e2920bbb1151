package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReportWrite(t *testing.T) {
	dir := t.TempDir()
	r := &Report{Dir: dir, Command: "ferry-bench -only push", Started: time.Now(), Finished: time.Now(), Machine: Machine{Cores: 2}}
	r.Add(&Section{Scenario: ScenarioPush, Title: "Push to Synced", Started: time.Now(), Duration: "1s", Figures: []*Figure{{
		ID: "push-1r-refresh", Title: "Push to Synced, 1 region", Unit: "s", Samples: []float64{1, 2, 3},
		What: "Seconds.", Reproduce: "make build && go run ./bench/cmd/ferry-bench -only push",
	}, {
		ID: "push-ratio", Title: "Push ratio", Unit: "×", Samples: []float64{1.2, 1.4, 1.6},
		What: "Ratio.", Reproduce: "make build && go run ./bench/cmd/ferry-bench -only push", Goal: &Goal{Max: 1.3, Source: "issue 20"},
	}, {
		ID: "push-none", Title: "Push unmeasured", Unit: "s", What: "Nothing.",
	}}})
	r.Add(&Section{Scenario: ScenarioIdle, Title: "Idle cost", Err: "the stack did not start"})
	r.Add(&Section{Scenario: ScenarioIdle, Title: "Idle cost, large", Skipped: "the fleet was not idle"})
	if err := r.Write(); err != nil {
		t.Fatal(err)
	}
	if got := r.Failed(); len(got) != 1 || got[0] != "Idle cost" {
		t.Errorf("Failed() = %q, want only the section that failed (a skipped one is a result)", got)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| [Push to Synced, 1 region](#push-to-synced) | s | 3 | 2.00 | min–max 1.00–3.00 |",
		"| Idle cost | | 0 | – | did not run: the stack did not start |",
		"Reproduce: `make build && go run ./bench/cmd/ferry-bench -only push`",
		"**Did not finish:** the stack did not start",
		"| Idle cost, large | | 0 | – | not measured: the fleet was not idle |",
		"| [Push unmeasured](#push-to-synced) | s | 0 | – | not measured |",
		"**Not measured:** the fleet was not idle.",
		"| [Push ratio](#push-to-synced) | ≤ 1.30 × (issue 20) | 1.40 | not met |",
		"Goal (issue 20): a median of at most 1.30 ×: **not met**.",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	var back Report
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &back); err != nil || len(back.Sections) != 3 || back.Sections[0].Figures[0].Samples[2] != 3 {
		t.Errorf("results.json does not round-trip: %v, %s", err, data)
	}
}

func TestAnchor(t *testing.T) {
	if got := anchor("Apply: Ferry against kubectl apply --server-side"); got != "apply-ferry-against-kubectl-apply---server-side" {
		t.Errorf("anchor = %q", got)
	}
}

func TestReportKeep(t *testing.T) {
	out, results := t.TempDir(), t.TempDir()
	r := &Report{Dir: out, Command: "ferry-bench", Started: time.Now(), Finished: time.Now(), Machine: Machine{Cores: 2}}
	r.Add(&Section{Scenario: ScenarioPush, Title: "Push to Synced", Images: []string{"push-to-synced.png"}})
	if err := os.WriteFile(filepath.Join(out, "push-to-synced.png"), []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(); err != nil {
		t.Fatal(err)
	}
	file, err := r.Keep(results, "2026-12-04-abc1234")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(results, "2026-12-04-abc1234.md"); file != want {
		t.Errorf("Keep wrote %s, want %s", file, want)
	}
	md, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "![push-to-synced.png](2026-12-04-abc1234-push-to-synced.png)") {
		t.Errorf("the kept report does not link its own copy of the image:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(results, "2026-12-04-abc1234-push-to-synced.png")); err != nil {
		t.Errorf("the image was not kept beside the report: %v", err)
	}
}

// TestInterimReportSaysHowLongSoFar: the report written while the run goes
// on has no end yet, and says how long it has run.
func TestInterimReportSaysHowLongSoFar(t *testing.T) {
	r := &Report{Command: "ferry-bench", Started: time.Now().Add(-90 * time.Second), Machine: Machine{Cores: 2}}
	md := r.markdown("")
	if !strings.Contains(md, "1m30s so far") || strings.Contains(md, "-2562047h") {
		t.Errorf("interim header: %q", strings.SplitN(md, "\n", 4)[:3])
	}
}
