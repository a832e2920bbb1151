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
	m := r.Machine
	took := r.Finished.Sub(r.Started).Round(time.Second).String()
	if r.Finished.IsZero() { // the report written as each scenario ends
		took = time.Since(r.Started).Round(time.Second).String() + " so far"
	}
	d := reportText{Started: r.Started.UTC().Format("2006-01-02 15:04 UTC"), Took: took,
		Cores: m.Cores, CPU: m.CPU, MemGiB: m.MemGiB, GoVersion: m.GoVersion, LoadStart: m.Load[0], LoadEnd: r.LoadEnd[0],
		Command: r.Command, Commit: r.Commit}
	b.WriteString(say(d, "header"))
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
	b.WriteString(say(d, "spread"))
	var goals strings.Builder
	for _, s := range r.Sections {
		for _, f := range s.Figures {
			if f.Goal != nil {
				fmt.Fprintf(&goals, "| [%s](#%s) | ≤ %s %s (%s) | %s | %s |\n", f.Title, anchor(s.Title), num(f.Goal.Max), f.Unit, f.Goal.Source, num(f.Summary().Median), f.goalState())
			}
		}
	}
	if goals.Len() > 0 {
		b.WriteString(say(d, "goals"))
		b.WriteString(goals.String())
		b.WriteString(say(d, "goals-load"))
	}

	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Title)
		d.SectionStarted, d.SectionDuration, d.Err, d.Skipped = s.Started.UTC().Format("15:04:05 UTC"), s.Duration, s.Err, s.Skipped
		b.WriteString(say(d, "ran"))
		if s.Err != "" {
			b.WriteString(say(d, "did-not-finish"))
		}
		if s.Skipped != "" {
			b.WriteString(say(d, "not-measured"))
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
			d.Fig = reportFigure{Title: f.Title, Unit: f.Unit, N: sum.N, Median: sum.Median, Spread: spread(sum), What: f.What,
				Note: f.Note, Goal: f.Goal, GoalState: f.goalState(), Reproduce: f.Reproduce}
			// Its own line, so that the command stands out in the file.
			b.WriteString(say(d, "figure") + "\n" + say(d, "reproduce"))
		}
	}
	return b.String()
}

// reportText is the data of text/report.md.tmpl: the run (Started, Took,
// the machine, the command), the section being written and the figure
// being described.
type reportText struct {
	Started, Took, CPU, GoVersion, Command, Commit string
	Cores                                          int
	MemGiB, LoadStart, LoadEnd                     float64
	SectionStarted, SectionDuration, Err, Skipped  string
	Fig                                            reportFigure
}

// reportFigure is a figure as the report describes it: N samples, their
// Median and Spread, and whether the median met its Goal (GoalState).
type reportFigure struct {
	Title, Unit, Spread, What, Note, GoalState, Reproduce string
	N                                                     int
	Median                                                float64
	Goal                                                  *Goal
}

func (reportText) textFile() string { return "report" }

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
