package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Figure is one measured quantity: its samples and how to get them again.
type Figure struct {
	// ID is short and stable: "push-3r-refresh".
	ID string `json:"id"`
	// Title names the figure in the report's table.
	Title string `json:"title"`
	// What says what was measured, from which moment to which.
	What string `json:"what"`
	// Unit of the samples: "s", "ms", "cores", "MiB", "×", "per reconcile".
	Unit string `json:"unit"`
	// Samples, one per run (or per pair of runs for a ratio).
	Samples []float64 `json:"samples"`
	// Reproduce is the command that measures this figure alone.
	Reproduce string `json:"reproduce"`
	// Note qualifies the figure: what it includes, what went wrong.
	Note string `json:"note,omitempty"`
	// Goal is the target for the figure's median, when it has one.
	Goal *Goal `json:"goal,omitempty"`
}

// Goal is a target a figure's median must not exceed: Max, in the
// figure's unit; Source names who set it ("issue 20").
type Goal struct {
	Max    float64 `json:"max"`
	Source string  `json:"source"`
}

// goalState says whether the figure met its goal: "met", "not met", or
// "not measured".
func (f *Figure) goalState() string {
	sum := f.Summary()
	switch {
	case f.Goal == nil:
		return ""
	case sum.N == 0:
		return "not measured"
	case sum.Median <= f.Goal.Max:
		return "met"
	}
	return "not met"
}

// Summary of the figure's samples.
func (f *Figure) Summary() Summary { return Summarize(f.Samples) }

// Section is one scenario's part of the report.
type Section struct {
	Scenario string    `json:"scenario"`
	Title    string    `json:"title"`
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
	// Text is Markdown: how the scenario ran, tables of details.
	Text    string    `json:"text,omitempty"`
	Figures []*Figure `json:"figures"`
	// Images are file names next to the report.
	Images []string `json:"images,omitempty"`
	// Err is set when the scenario failed or ran out of its budget; the
	// figures it measured before are still reported.
	Err string `json:"error,omitempty"`
	// Skipped says why a scenario measured nothing though nothing failed
	// (what it needed did not happen within the limits: another figure).
	Skipped string `json:"skipped,omitempty"`
}

// Report collects every section of one ferry-bench run.
type Report struct {
	mu       sync.Mutex
	Dir      string     `json:"-"`
	Command  string     `json:"command"`
	Commit   string     `json:"commit,omitempty"`
	Started  time.Time  `json:"started"`
	Finished time.Time  `json:"finished"`
	Machine  Machine    `json:"machine"`
	LoadEnd  [3]float64 `json:"loadEnd"`
	Sections []*Section `json:"sections"`
}

// Add appends a finished section.
func (r *Report) Add(s *Section) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Sections = append(r.Sections, s)
}

// Failed names the sections that did not finish.
func (r *Report) Failed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.Sections {
		if s.Err != "" {
			out = append(out, s.Title)
		}
	}
	return out
}

// Write writes report.md and results.json into r.Dir.
func (r *Report) Write() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "results.json"), data, 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "report.md"), []byte(r.markdown("")), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// Keep writes the report as dir/name.md, the record of a full run, with
// its images beside it as name-<image>; it returns the file's path.
func (r *Report) Keep(dir, name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("keep the report in %s: %w", dir, err)
	}
	for _, s := range r.Sections {
		for _, img := range s.Images {
			data, err := os.ReadFile(filepath.Join(r.Dir, img))
			if err != nil {
				return "", fmt.Errorf("keep the report's image: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-"+img), data, 0o644); err != nil {
				return "", fmt.Errorf("keep the report's image: %w", err)
			}
		}
	}
	file := filepath.Join(dir, name+".md")
	if err := os.WriteFile(file, []byte(r.markdown(name+"-")), 0o644); err != nil {
		return "", fmt.Errorf("keep the report: %w", err)
	}
	return file, nil
}

// markdown is the report; its images are named imgPrefix+image.
func (r *Report) markdown(imgPrefix string) string {
	var b strings.Builder
	b.WriteString("# Ferry benchmarks\n\n")
	m := r.Machine
	fmt.Fprintf(&b, "Run %s, %s on %d cores (%s), %.0f GiB, %s, load average %.2f at the start and %.2f at the end: ",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Finished.Sub(r.Started).Round(time.Second), m.Cores, m.CPU, m.MemGiB, m.GoVersion,
		m.Load[0], r.LoadEnd[0])
	b.WriteString("the machine is shared, so read every figure as measured under that load.\n")
	fmt.Fprintf(&b, "Everything ran for real on one machine: the local stack of `internal/devenv` (Temporal dev server, one kube-apiserver with kwok per region, Redis, the Git server) and the `ferry` and `ferry-worker` binaries.\n\n")
	fmt.Fprintf(&b, "Command: `%s`", r.Command)
	if r.Commit != "" {
		fmt.Fprintf(&b, " at commit %s", r.Commit)
	}
	b.WriteString("\n\n")

	b.WriteString("## Figures\n\n")
	b.WriteString("| figure | unit | runs | median | spread |\n| --- | --- | --- | --- | --- |\n")
	for _, s := range r.Sections {
		for _, f := range s.Figures {
			sum := f.Summary()
			if sum.N == 0 {
				why := "not measured"
				if f.Note != "" {
					why += ": " + oneLine(f.Note)
				}
				fmt.Fprintf(&b, "| [%s](#%s) | %s | 0 | – | %s |\n", f.Title, anchor(s.Title), f.Unit, why)
				continue
			}
			fmt.Fprintf(&b, "| [%s](#%s) | %s | %d | %s | %s |\n", f.Title, anchor(s.Title), f.Unit, sum.N, num(sum.Median), spread(sum))
		}
	}
	for _, s := range r.Sections {
		switch {
		case s.Err != "" && len(s.Figures) == 0:
			fmt.Fprintf(&b, "| %s | | 0 | – | did not run: %s |\n", s.Title, oneLine(s.Err))
		case s.Skipped != "" && len(s.Figures) == 0:
			fmt.Fprintf(&b, "| %s | | 0 | – | not measured: %s |\n", s.Title, oneLine(s.Skipped))
		}
	}
	b.WriteString("\nSpread is p95 with min–max when a figure has 20 runs or more, else min–max. A ratio's runs are pairs, alternated so that the machine's load drifts over both sides alike.\n")
	var goals strings.Builder
	for _, s := range r.Sections {
		for _, f := range s.Figures {
			if f.Goal != nil {
				fmt.Fprintf(&goals, "| [%s](#%s) | ≤ %s %s (%s) | %s | %s |\n", f.Title, anchor(s.Title), num(f.Goal.Max), f.Unit, f.Goal.Source, num(f.Summary().Median), f.goalState())
			}
		}
	}
	if goals.Len() > 0 {
		b.WriteString("\n## Goals\n\n| figure | goal (median) | median | |\n| --- | --- | --- | --- |\n")
		b.WriteString(goals.String())
		fmt.Fprintf(&b, "\nLoad average %.2f at the start and %.2f at the end, on %d cores shared with the machine's other users: a goal not met here may be the machine's.\n", m.Load[0], r.LoadEnd[0], m.Cores)
	}

	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Title)
		fmt.Fprintf(&b, "Ran %s for %s.\n\n", s.Started.UTC().Format("15:04:05 UTC"), s.Duration)
		if s.Err != "" {
			fmt.Fprintf(&b, "**Did not finish:** %s\n\n", oneLine(s.Err))
		}
		if s.Skipped != "" {
			fmt.Fprintf(&b, "**Not measured:** %s.\n\n", oneLine(s.Skipped))
		}
		if s.Text != "" {
			b.WriteString(strings.TrimSpace(s.Text))
			b.WriteString("\n\n")
		}
		for _, img := range s.Images {
			fmt.Fprintf(&b, "![%s](%s)\n\n", img, imgPrefix+img)
		}
		for _, f := range s.Figures {
			sum := f.Summary()
			if sum.N == 0 {
				fmt.Fprintf(&b, "**%s** (%s): not measured. %s", f.Title, f.Unit, f.What)
			} else if sum.N == 1 {
				fmt.Fprintf(&b, "**%s** (%s): %s, one run. %s", f.Title, f.Unit, num(sum.Median), f.What)
			} else {
				fmt.Fprintf(&b, "**%s** (%s): median %s, %s, %d runs. %s", f.Title, f.Unit, num(sum.Median), spread(sum), sum.N, f.What)
			}
			if f.Note != "" {
				fmt.Fprintf(&b, " %s", f.Note)
			}
			if f.Goal != nil {
				fmt.Fprintf(&b, " Goal (%s): a median of at most %s %s: **%s**.", f.Goal.Source, num(f.Goal.Max), f.Unit, f.goalState())
			}
			fmt.Fprintf(&b, "\nReproduce: `%s`\n\n", f.Reproduce)
		}
	}
	return b.String()
}

func spread(s Summary) string {
	switch {
	case s.N == 0:
		return "–"
	case s.N == 1:
		return "one run"
	case s.N >= 20:
		return fmt.Sprintf("p95 %s (min–max %s–%s)", num(s.P95), num(s.Min), num(s.Max))
	}
	return fmt.Sprintf("min–max %s–%s", num(s.Min), num(s.Max))
}

// num prints three significant digits, without an exponent.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a == 0:
		return "0"
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// anchor is the fragment GitHub's Markdown gives a heading.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
