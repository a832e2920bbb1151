package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// doubling25 is a chart whose template doubles a string 25 times (256 MiB),
// printing only its length.
var doubling25 = map[string]string{
	"chart/Chart.yaml": "apiVersion: v2\nname: doubling\nversion: 0.1.0\n",
	"chart/templates/cm.yaml": `{{- $s := "xxxxxxxx" }}{{- range until 25 }}{{- $s = printf "%s%s" $s $s }}{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: doubling
data:
  size: "{{ len $s }}"
`,
}

// tgzBomb is a chart with four vendored subcharts, each about 100 KiB
// packed and 96 MiB inflated (24 files of 4 MiB of zeros: under Helm's
// own limits of 5 MiB a file and 100 MiB a chart).
func tgzBomb(t *testing.T) map[string]string {
	files := map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: archives\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: archives\n",
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "zeros/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	add("Chart.yaml", []byte("apiVersion: v2\nname: zeros\nversion: 0.1.0\n"))
	zeros := make([]byte, 4<<20)
	for i := 0; i < 24; i++ {
		add(fmt.Sprintf("files/zeros-%02d", i), zeros)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	for i := 0; i < 4; i++ {
		files[fmt.Sprintf("chart/charts/zeros-%d.tgz", i)] = buf.String()
	}
	return files
}

// procStatus reads a field of /proc/<pid>/status in KiB.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kib
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// failedRenders is the worker's count of renders that failed.
func failedRenders(t *testing.T, addr string) int64 {
	var n int64
	for _, line := range strings.Split(scrape(t, addr), "\n") {
		if strings.HasPrefix(line, "ferry_render_duration_seconds_count{") && strings.Contains(line, `result="error"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			n += v
		}
	}
	return n
}

// TestThreeBombs: a Helm template doubling a string 25 times, a 512 MiB
// file of zeros and four subchart archives that inflate to 384 MiB each
// end as a render error in their app's status naming the limit and the
// flag that raises it. The worker stays the same process, its peak RSS
// stays under the render memory limit plus a margin, it renders each bomb
// once however often it is asked, and it syncs another app's new commit
// meanwhile.
func TestThreeBombs(t *testing.T) {
	const renderMemory = 256 << 20
	metrics := freeAddr(t)
	w := startWorker(t, "--render-memory", "256Mi", "--metrics-addr", metrics)
	pid := w.Pid()
	c := temporalClient(t)

	doubling := newRepo(t, "bomb-doubling")
	doubling.write(doubling25)
	doubling.commitAndPush("a template doubling a string 25 times")

	zeros := newRepo(t, "bomb-zeros")
	zeros.write(map[string]string{"app/cm.yaml": configMap("zeros", "v1")})
	f, err := os.Create(filepath.Join(zeros.Dir, "zeros.bin"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(512<<20))
	require.NoError(t, f.Close())
	zeros.commitAndPush("a 512 MiB file of zeros")

	archives := newRepo(t, "bomb-archives")
	archives.write(tgzBomb(t))
	archives.commitAndPush("four subchart archives of zeros")

	calm := newRepo(t, "calm-beside-bombs")
	calm.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := calm.commitAndPush("v1")

	bombs := []struct{ name, path, limit, flag string }{
		{"bomb-doubling", "chart", "more than 256 MiB of memory", "--render-memory"},
		{"bomb-zeros", "app", "a file of 512 MiB, larger than the 64 MiB", "--checkout-max-file-size"},
		{"bomb-archives", "chart", "inflate to more than 32 MiB", "--render-max-archive-size"},
	}
	repos := map[string]*gitRepo{"bomb-doubling": doubling, "bomb-zeros": zeros, "bomb-archives": archives}
	for _, b := range bombs {
		mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(b.name, repos[b.name].URL, b.path, b.name, true, "3m")))
	}
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("calm-beside-bombs", calm.URL, "app", "calm-beside-bombs", true, "3m")))

	for _, b := range bombs {
		eventually(t, 5*time.Minute, b.name+"'s render fails naming its limit", func() (bool, string) {
			v, err := queryView(t, c, b.name)
			if err != nil {
				return false, err.Error()
			}
			for _, cond := range v.Status.Conditions {
				if cond.Type == "ComparisonError" && strings.Contains(cond.Message, b.limit) && strings.Contains(cond.Message, b.flag) {
					t.Logf("%s: %s", b.name, cond.Message)
					return true, ""
				}
			}
			return false, fmt.Sprintf("conditions %+v", v.Status.Conditions)
		})
	}
	failed := failedRenders(t, metrics)
	t.Logf("failed renders after the three bombs: %d", failed)

	// Asked again, the bombs answer from the remembered failure; the calm
	// app syncs its new commit meanwhile.
	waitApp(t, "calm-beside-bombs", sha, 2*time.Minute)
	calm.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha = calm.commitAndPush("v2")
	mustFerry(t, "app", "refresh", "calm-beside-bombs")
	for round := 0; round < 2; round++ {
		reconciled := map[string]time.Time{}
		for _, b := range bombs {
			v, err := queryView(t, c, b.name)
			require.NoError(t, err)
			require.NotNil(t, v.Status.ReconciledAt)
			reconciled[b.name] = *v.Status.ReconciledAt
			mustFerry(t, "app", "refresh", b.name)
		}
		eventually(t, 2*time.Minute, "the refreshed bombs reconcile and report their error again", func() (bool, string) {
			for _, b := range bombs {
				v, err := queryView(t, c, b.name)
				if err != nil {
					return false, err.Error()
				}
				if v.Status.ReconciledAt == nil || !v.Status.ReconciledAt.After(reconciled[b.name]) {
					return false, b.name + " has not reconciled since the refresh"
				}
				found := false
				for _, cond := range v.Status.Conditions {
					found = found || (cond.Type == "ComparisonError" && strings.Contains(cond.Message, b.limit) && strings.Contains(cond.Message, b.flag))
				}
				if !found {
					return false, fmt.Sprintf("%s: conditions %+v", b.name, v.Status.Conditions)
				}
			}
			return true, ""
		})
	}
	waitApp(t, "calm-beside-bombs", sha, 2*time.Minute)
	require.Equal(t, failed, failedRenders(t, metrics), "a refreshed bomb renders again; a remembered failure should answer")

	require.Equal(t, pid, w.Pid())
	require.NoError(t, syscall.Kill(pid, 0), "the worker still runs")
	hwm := procStatus(t, pid, "VmHWM") << 10
	t.Logf("worker %d: peak RSS (VmHWM) %d MiB, now (VmRSS) %d MiB", pid, hwm>>20, procStatus(t, pid, "VmRSS")>>10)
	require.Less(t, hwm, int64(renderMemory+256<<20), "the worker's peak RSS: the render memory limit plus a 256 MiB margin")

	for _, b := range bombs {
		mustFerry(t, "app", "delete", b.name, "--cascade")
	}
	mustFerry(t, "app", "delete", "calm-beside-bombs", "--cascade")
}
