package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// chartArchive is a packaged chart, as helm package writes it: its files
// under a directory named after the chart, gzipped.
func chartArchive(t testing.TB, name string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := []string{"Chart.yaml"}
	files["Chart.yaml"] = []byte(fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\n", name))
	for n := range files {
		if n != "Chart.yaml" {
			names = append(names, n)
		}
	}
	for _, n := range names {
		data := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + n, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zerosChart is an archived chart of 24 files of 4 MiB of zeros: each file
// under Helm's 5 MiB limit for one, 96 MiB under its 100 MiB for a chart,
// about 100 KiB packed.
func zerosChart(t testing.TB, name string) []byte {
	files := map[string][]byte{}
	zeros := make([]byte, 4<<20)
	for i := 0; i < 24; i++ {
		files[fmt.Sprintf("files/zeros-%02d", i)] = zeros
	}
	return chartArchive(t, name, files)
}

func writeChart(t *testing.T, root string, archives map[string][]byte) {
	t.Helper()
	writeFile(t, filepath.Join(root, "chart", "Chart.yaml"), "apiVersion: v2\nname: top\nversion: 0.1.0\n")
	writeFile(t, filepath.Join(root, "chart", "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
	for name, data := range archives {
		p := filepath.Join(root, "chart", "charts", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChartArchiveBomb: four small subchart archives that inflate to
// 384 MiB end as a LimitError naming the limit and its flag, before Helm's
// loader holds them in memory.
func TestChartArchiveBomb(t *testing.T) {
	root := t.TempDir()
	bomb := zerosChart(t, "zeros")
	archives := map[string][]byte{}
	for i := 0; i < 4; i++ {
		archives[fmt.Sprintf("zeros-%d.tgz", i)] = bomb
	}
	writeChart(t, root, archives)
	t.Logf("four archives of %d KiB", len(bomb)>>10)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := &Renderer{Limits: Limits{Flags: LimitFlags{ArchiveBytes: "--render-max-archive-size"}}}
	_, err := r.Render(context.Background(), root, app.Source{Path: "chart"}, Options{AppName: "app"})
	runtime.ReadMemStats(&after)
	assertLimit(t, err, "archive size", "render chart/charts/zeros-0.tgz: the chart's archived subcharts (charts/*.tgz) inflate to more than 32 MiB", "--render-max-archive-size")
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the render allocated %d MiB: the archives were inflated into memory", alloc>>20)
	}
}

// TestChartArchiveLimits: the limit counts every archive of a render
// together, archives nested in archives too, and their files count
// against MaxFiles; archives that fit render.
func TestChartArchiveLimits(t *testing.T) {
	small := chartArchive(t, "small", map[string][]byte{
		"templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\n"),
		"files/pad":         make([]byte, 300<<10),
	})
	nested := chartArchive(t, "outer", map[string][]byte{
		"templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outer\n"),
		"charts/small.tgz":  small,
	})
	tests := []struct {
		name     string
		archives map[string][]byte
		limits   Limits
		what     string
		path     string
	}{
		{"fits", map[string][]byte{"small.tgz": small, "outer.tgz": nested}, Limits{MaxArchiveBytes: 2 << 20}, "", ""},
		{"all archives together", map[string][]byte{"a.tgz": small, "b.tgz": chartArchive(t, "b", map[string][]byte{"files/pad": make([]byte, 300<<10)})},
			Limits{MaxArchiveBytes: 500 << 10}, "archive size", "chart/charts/b.tgz"},
		{"nested", map[string][]byte{"outer.tgz": nested}, Limits{MaxArchiveBytes: 200 << 10}, "archive size", "chart/charts/outer.tgz/charts/small.tgz"},
		{"files", map[string][]byte{"outer.tgz": nested}, Limits{MaxFiles: 4}, "files", "chart"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeChart(t, root, tc.archives)
			r := &Renderer{Limits: tc.limits}
			res, err := r.Render(context.Background(), root, app.Source{Path: "chart"}, Options{AppName: "app"})
			if tc.what == "" {
				if err != nil {
					t.Fatal(err)
				}
				assertCount(t, res.Objects, "ConfigMap", 4)
				return
			}
			limit, ok := err.(*LimitError)
			if !ok || limit.What != tc.what || limit.Path != tc.path {
				t.Fatalf("err = %#v (%v), want a %q LimitError for %s", err, err, tc.what, tc.path)
			}
		})
	}
}
