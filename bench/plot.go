package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"slices"
)

// Series is one line of a plot: a name and its samples.
type Series struct {
	Name    string
	Samples []float64
}

var seriesColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
}

// PlotCDF writes a PNG of the empirical cumulative distribution of each
// series: for a latency x, the share of runs that took at most x. A dot
// marks each series' median.
func PlotCDF(path, title, xLabel string, series []Series) error {
	const (
		w, plotH                 = 960, 600
		left, right, top, bottom = 90, 30, 50, 70
		legendLine               = 24
	)
	// The legend goes under the plot, where it hides no curve.
	legendTop := plotH + 5
	h := legendTop + len(series)*legendLine + 15
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	ink := color.RGBA{0x22, 0x22, 0x22, 0xff}
	grid := color.RGBA{0xe0, 0xe0, 0xe0, 0xff}

	maxX := 0.0
	for _, s := range series {
		for _, v := range s.Samples {
			maxX = math.Max(maxX, v)
		}
	}
	if maxX <= 0 {
		maxX = 1
	}
	step := niceStep(maxX / 6)
	maxX = math.Ceil(maxX*1.02/step) * step
	px := func(v float64) int { return left + int(math.Round(v/maxX*float64(w-left-right))) }
	py := func(p float64) int { return plotH - bottom - int(math.Round(p*float64(plotH-top-bottom))) }

	// Grid and ticks.
	for v := 0.0; v <= maxX+step/2; v += step {
		x := px(v)
		vline(img, x, top, plotH-bottom, grid)
		label := trimFloat(v, step)
		drawText(img, x-textWidth(label, 2)/2, plotH-bottom+10, label, 2, ink)
	}
	for p := 0.0; p <= 1.0001; p += 0.25 {
		y := py(p)
		hline(img, left, w-right, y, grid)
		label := fmt.Sprintf("%.0f%%", p*100)
		drawText(img, left-10-textWidth(label, 2), y-7, label, 2, ink)
	}
	hline(img, left, w-right, plotH-bottom, ink)
	vline(img, left, top, plotH-bottom, ink)
	drawText(img, (w-textWidth(title, 2))/2, 15, title, 2, ink)
	drawText(img, left+(w-left-right-textWidth(xLabel, 2))/2, plotH-30, xLabel, 2, ink)
	drawTextUp(img, 15, top+(plotH-top-bottom+textWidth("RUNS AT MOST X", 2))/2, "runs at most x", 2, ink)

	// Steps of each series, then its median.
	for i, s := range series {
		if len(s.Samples) == 0 {
			continue
		}
		c := seriesColors[i%len(seriesColors)]
		sorted := slices.Clone(s.Samples)
		slices.Sort(sorted)
		n := float64(len(sorted))
		x0, y0 := px(0), py(0)
		for k, v := range sorted {
			x := px(v)
			line(img, x0, y0, x, y0, c)
			y := py(float64(k+1) / n)
			line(img, x, y0, x, y, c)
			x0, y0 = x, y
		}
		line(img, x0, y0, w-right, y0, c)
		med := Percentile(sorted, 50)
		dot(img, px(med), py(0.5), 5, c)
	}

	for i, s := range series {
		c := seriesColors[i%len(seriesColors)]
		y := legendTop + i*legendLine
		fill(img, image.Rect(left, y+4, left+28, y+9), c)
		drawText(img, left+36, y, legendLabel(s), 2, ink)
	}

	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("write plot %s: %w", path, err)
	}
	return f.Close()
}

func legendLabel(s Series) string {
	sum := Summarize(s.Samples)
	return fmt.Sprintf("%s (n=%d, p50 %s, p95 %s)", s.Name, sum.N, num(sum.Median), num(sum.P95))
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	exp := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*exp {
			return m * exp
		}
	}
	return 10 * exp
}

func trimFloat(v, step float64) string {
	decimals := 0
	for s := step; s < 1 && decimals < 4; s *= 10 {
		decimals++
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
	}
}

// line draws a 2-pixel line between two points (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		fill(img, image.Rect(x0, y0-1, x0+2, y0+1), c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func dot(img *image.RGBA, x, y, r int, c color.Color) {
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			if dx*dx+dy*dy <= r*r {
				img.Set(x+dx, y+dy, c)
			}
		}
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
