package bench

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotCDF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cdf.png")
	series := []Series{
		{Name: "1 region", Samples: []float64{0.9, 1.0, 1.1, 0.95}},
		{Name: "3 regions", Samples: []float64{1.2, 1.3}},
		{Name: "none yet"},
	}
	if err := PlotCDF(path, "Push to Synced", "seconds", series); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 600+5+3*24+15 {
		t.Errorf("size %v, want 960 wide, 600 high plus a legend line per series", b)
	}
}

func TestGlyphs(t *testing.T) {
	for r, g := range glyphs {
		for i, row := range g {
			if len(row) != glyphW || strings.Trim(row, "# ") != "" {
				t.Errorf("glyph %q row %d is %q: want %d characters of '#' and ' '", r, i, row, glyphW)
			}
		}
	}
}

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0.17: 0.2, 0.3: 0.5, 1: 1, 1.2: 2, 7: 10, 25: 50} {
		if got := niceStep(raw); !near(got, want) {
			t.Errorf("niceStep(%v) = %v, want %v", raw, got, want)
		}
	}
}
