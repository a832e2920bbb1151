package bench

import (
	"math"
	"slices"
)

// Summary describes a set of samples: how many, their median and spread.
type Summary struct {
	N                int
	Min, Median, P95 float64
	Max, Mean        float64
}

// Summarize computes a Summary. Percentiles use linear interpolation
// between closest ranks, so the p95 of 20 samples lies between the 19th and
// the 20th; with fewer than 20 samples the report gives min–max instead.
func Summarize(samples []float64) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return Summary{
		N:      len(s),
		Min:    s[0],
		Median: Percentile(s, 50),
		P95:    Percentile(s, 95),
		Max:    s[len(s)-1],
		Mean:   sum / float64(len(s)),
	}
}

// Percentile returns the p-th percentile (0–100) of sorted samples.
func Percentile(sorted []float64, p float64) float64 {
	switch len(sorted) {
	case 0:
		return math.NaN()
	case 1:
		return sorted[0]
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// ratios divides a[i] by b[i] for every pair: paired runs (alternated, so
// that a drift in the machine's load hits both sides alike) give a ratio per
// pair, and the spread of the ratio comes from those.
func ratios(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := range n {
		if b[i] > 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}
