package bench

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		want    Summary
	}{
		{"one", []float64{3}, Summary{N: 1, Min: 3, Median: 3, P95: 3, Max: 3, Mean: 3}},
		{"odd, unsorted", []float64{5, 1, 3}, Summary{N: 3, Min: 1, Median: 3, P95: 4.8, Max: 5, Mean: 3}},
		{"even", []float64{1, 2, 3, 4}, Summary{N: 4, Min: 1, Median: 2.5, P95: 3.85, Max: 4, Mean: 2.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.samples)
			if got.N != tt.want.N || !near(got.Min, tt.want.Min) || !near(got.Median, tt.want.Median) ||
				!near(got.P95, tt.want.P95) || !near(got.Max, tt.want.Max) || !near(got.Mean, tt.want.Mean) {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.samples, got, tt.want)
			}
		})
	}
	if s := Summarize(nil); s.N != 0 {
		t.Errorf("Summarize(nil).N = %d, want 0", s.N)
	}
}

func TestPercentileOfTwenty(t *testing.T) {
	var s []float64
	for i := 1; i <= 20; i++ {
		s = append(s, float64(i))
	}
	// Rank 0.95 × 19 = 18.05: between the 19th and the 20th sample.
	if got := Percentile(s, 95); !near(got, 19.05) {
		t.Errorf("p95 of 1..20 = %v, want 19.05", got)
	}
}

func TestRatios(t *testing.T) {
	got := ratios([]float64{2, 3, 4}, []float64{1, 0, 2, 7})
	want := []float64{2, 2}
	if len(got) != len(want) || !near(got[0], want[0]) || !near(got[1], want[1]) {
		t.Errorf("ratios = %v, want %v (a zero divisor is left out, unpaired runs too)", got, want)
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.00071: "0.00071", 0.0123: "0.012", 0.97: "0.970", 1.234: "1.23", 13.84: "13.8", 1234.5: "1234", math.NaN(): "–"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
