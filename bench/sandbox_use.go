package bench

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// sandboxUse is what the worker's render sandboxes did, from its metrics:
// renders, sandbox starts, renders a waiting sandbox served, and why the
// sandboxes that waited ended (ferry_render_sandbox_reuse_ends_total).
type sandboxUse struct {
	renders, starts, reuses float64
	ends                    map[string]float64
}

// sandboxUse reads w's counts now; a worker that renders in no sandbox
// has none (zero).
func (w *Worker) sandboxUse() sandboxUse {
	resp, err := http.Get("http://" + w.MetricsAddr + "/metrics")
	if err != nil {
		return sandboxUse{}
	}
	defer resp.Body.Close()
	return sandboxUseOf(readSamples(resp.Body))
}

// sandboxUseOf picks the counts out of a worker's samples (readSamples).
func sandboxUseOf(samples map[string]map[string]float64) sandboxUse {
	u := sandboxUse{renders: total(samples["ferry_render_duration_seconds_count"]), starts: total(samples["ferry_render_sandbox_starts_total"]),
		reuses: total(samples["ferry_render_sandbox_reuses_total"]), ends: map[string]float64{}}
	for labels, v := range samples["ferry_render_sandbox_reuse_ends_total"] {
		u.ends[parseLabels(labels)["reason"]] += v
	}
	return u
}

// since is u less the counts of before.
func (u sandboxUse) since(before sandboxUse) sandboxUse {
	out := sandboxUse{renders: u.renders - before.renders, starts: u.starts - before.starts, reuses: u.reuses - before.reuses,
		ends: map[string]float64{}}
	for k, v := range u.ends {
		out.ends[k] = v - before.ends[k]
	}
	return out
}

// describe is a sentence of the report; "" when nothing was counted.
func (u sandboxUse) describe() string {
	if u.starts == 0 {
		return ""
	}
	var ends []string
	for _, reason := range []string{"idle", "renders", "busy", "failed", "full", "closed"} {
		if n := u.ends[reason]; n > 0 {
			ends = append(ends, fmt.Sprintf("%s %.0f", reason, n))
		}
	}
	if len(ends) == 0 {
		ends = []string{"none"}
	}
	return fmt.Sprintf("The worker rendered %.0f times and started %.0f render sandboxes (%.2f renders per start); "+
		"%.0f renders were served by a sandbox that had rendered the same checkout before, and the sandboxes that waited "+
		"for their checkout's next render ended by reason: %s.", u.renders, u.starts, u.renders/u.starts, u.reuses, strings.Join(ends, ", "))
}

// readSamples reads Prometheus text: each sample's value by metric name
// and its labels as written ("" for none).
func readSamples(r io.Reader) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
			if line[i] == '{' {
				j := strings.LastIndexByte(line, '}')
				if j < i {
					continue
				}
				labels = line[i+1 : j]
			}
		}
		fields := strings.Fields(strings.TrimPrefix(line[len(name):], "{"+labels+"}"))
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		if out[name] == nil {
			out[name] = map[string]float64{}
		}
		out[name][labels] += v
	}
	return out
}

// total sums a metric's samples over their labels.
func total(byLabels map[string]float64) float64 {
	sum := 0.0
	for _, v := range byLabels {
		sum += v
	}
	return sum
}
