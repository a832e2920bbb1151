package e2e

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// doublingChart is a Helm chart whose template doubles a string until it
// needs 512 MiB: one commit that would take an unsandboxed worker down.
var doublingChart = map[string]string{
	"bomb/Chart.yaml": "apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
	"bomb/templates/cm.yaml": `{{- $s := "xxxxxxxx" }}{{- range until 26 }}{{- $s = printf "%s%s" $s $s }}{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: bomb
data:
  size: "{{ len $s }}"
`,
}

// TestRenderMemoryBombInTheSandbox: a chart that needs more memory than
// --render-memory fails its app's render with an error naming the limit and
// the flag; the worker lives on (same pid) and syncs another app's new
// commit meanwhile.
func TestRenderMemoryBombInTheSandbox(t *testing.T) {
	w := startWorker(t, "--render-memory", "256Mi")
	pid := w.Pid()
	c := temporalClient(t)

	bomb := newRepo(t, "bomb")
	bomb.write(doublingChart)
	bomb.commitAndPush("a template that needs 512 MiB")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("bomb", bomb.URL, "bomb", "bomb", true, "3m")))

	calm := newRepo(t, "calm")
	calm.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := calm.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("calm", calm.URL, "app", "calm", true, "3m")))

	eventually(t, 3*time.Minute, "app bomb's render fails on the memory limit", func() (bool, string) {
		v, err := queryView(t, c, "bomb")
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			if cond.Type == "ComparisonError" && strings.Contains(cond.Message, "more than 256 MiB of memory") &&
				strings.Contains(cond.Message, "--render-memory") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", v.Status.Conditions)
	})
	waitApp(t, "calm", sha, 2*time.Minute)
	calm.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha = calm.commitAndPush("v2")
	mustFerry(t, "app", "refresh", "calm")
	waitApp(t, "calm", sha, 2*time.Minute)

	require.Equal(t, pid, w.Pid())
	require.NoError(t, syscall.Kill(pid, 0), "the worker still runs")
	log, err := os.ReadFile(w.Log)
	require.NoError(t, err)
	require.Contains(t, string(log), `msg="render sandbox: `, "the worker logs the sandbox in force")
	require.NotContains(t, string(log), "render sandbox: none", "the test runs in a real sandbox")

	mustFerry(t, "app", "delete", "bomb", "--cascade")
	mustFerry(t, "app", "delete", "calm", "--cascade")
}
