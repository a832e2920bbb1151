package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// probeScript is the generate command of the test plugin: a ConfigMap
// named after ARGOCD_APP_NAME and the flavor parameter, whose data says
// what the plugin could reach of the worker: its environment (a canary
// variable, FERRY_*, KUBECONFIG, TEMPORAL_*), a service-account token,
// the worker's kubeconfig, /proc/1/environ, and a TCP connection to the
// Git server.
const probeScript = `set -u
count() { grep -c "$@" || true; }
env_hits=$(env | count -e "$CANARY" -e '^FERRY_' -e '^KUBECONFIG=' -e '^TEMPORAL_')
token=$(cat /var/run/secrets/kubernetes.io/serviceaccount/token 2>/dev/null | wc -c)
kubeconfig=$(cat "$KUBECONFIG_PATH" 2>/dev/null | wc -c)
proc1=$(tr '\0' '\n' < /proc/1/environ 2>/dev/null | count -e "$CANARY" -e '^FERRY_' -e '^KUBECONFIG=')
if timeout 5 bash -c "exec 3<>/dev/tcp/$GIT_HOST/$GIT_PORT" 2>/dev/null; then tcp=connected; else tcp=refused; fi
cat <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $ARGOCD_APP_NAME-$PARAM_FLAVOR
data:
  app: "$ARGOCD_APP_NAME"
  foo: "$ARGOCD_ENV_FOO"
  envHits: "$env_hits"
  tokenBytes: "$token"
  kubeconfigBytes: "$kubeconfig"
  proc1Hits: "$proc1"
  tcp: "$tcp"
YAML
`

// pluginFile is a ConfigManagementPlugin running probeScript with the
// values it looks for written in.
func pluginFile(canary, kubeconfig, gitHost, gitPort string) string {
	// Shell variables, not exported: the environment holds only what the
	// plugin was given.
	vars := fmt.Sprintf("CANARY=%s KUBECONFIG_PATH=%s GIT_HOST=%s GIT_PORT=%s\n", canary, kubeconfig, gitHost, gitPort)
	var b strings.Builder
	b.WriteString("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: probe\nspec:\n  version: v1\n")
	b.WriteString("  generate:\n    command: [sh, -c]\n    args:\n      - |\n")
	for _, line := range strings.Split(vars+probeScript, "\n") {
		b.WriteString("        " + line + "\n")
	}
	b.WriteString("  discover:\n    fileName: probe.marker\n")
	return b.String()
}

// TestPluginSyncsAndSeesNothingOfTheWorker: an app rendered by a
// config-management plugin syncs end to end; the plugin, run in the
// render sandbox, finds nothing of the worker's environment, no token,
// not the worker's kubeconfig, nothing in /proc/1/environ, and cannot
// connect to the Git server. The same script run on the host finds them
// all, so the probes can see what they look for.
func TestPluginSyncsAndSeesNothingOfTheWorker(t *testing.T) {
	repo := newRepo(t, "plugin")
	u, err := url.Parse(repo.URL)
	require.NoError(t, err)
	canary := fmt.Sprintf("canary-%d", time.Now().UnixNano())
	plugin := pluginFile(canary, stack.Kubeconfig, u.Hostname(), u.Port())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "probe.yaml"), []byte(plugin), 0o644))

	// The control: on the host, with the worker's environment, the probes
	// find what they look for.
	script := "CANARY=" + canary + " KUBECONFIG_PATH=" + stack.Kubeconfig + " GIT_HOST=" + u.Hostname() + " GIT_PORT=" + u.Port() + "\n" + probeScript
	host := exec.Command("sh", "-c", script)
	host.Env = append(env(), "FERRY_E2E_CANARY="+canary, "ARGOCD_APP_NAME=host", "PARAM_FLAVOR=x", "ARGOCD_ENV_FOO=")
	out, err := host.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{`kubeconfigBytes: "0"`, `tcp: "refused"`, `envHits: "0"`} {
		require.NotContains(t, string(out), want, "the probe finds nothing even on the host: it could not fail")
	}

	startWorkerEnv(t, []string{"FERRY_E2E_CANARY=" + canary}, "--plugin-dir", dir)
	repo.write(map[string]string{"app/probe.marker": "", "app/README.md": "rendered by the probe plugin\n"})
	sha := repo.commitAndPush("a plugin app")
	appDoc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: plugged
spec:
  source:
    repoURL: %s
    targetRevision: main
    path: app
    plugin:
      name: probe-v1
      env:
        - {name: FOO, value: "for-$ARGOCD_APP_NAME"}
      parameters:
        - {name: flavor, string: mint}
  destinations:
`, repo.URL)
	for _, r := range regions {
		appDoc += fmt.Sprintf("    - {name: %s, namespace: plugged}\n", r)
	}
	appDoc += "  syncPolicy:\n    automated: {prune: true}\n    syncOptions: [CreateNamespace=true]\n"
	mustFerry(t, "app", "apply", "-f", writeFile(t, appDoc))
	waitApp(t, "plugged", sha, 3*time.Minute)

	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps("plugged").Get(context.Background(), "plugged-mint", metav1.GetOptions{})
		require.NoError(t, err, "region %s: the plugin's ConfigMap, named from ARGOCD_APP_NAME and the flavor parameter", r)
		require.Equal(t, map[string]string{
			"app": "plugged", "foo": "for-plugged",
			"envHits":         "0", // no canary, FERRY_*, KUBECONFIG or TEMPORAL_* variable
			"tokenBytes":      "0", // no service-account token
			"kubeconfigBytes": "0", // not the worker's kubeconfig
			"proc1Hits":       "0", // PID 1's environment is the sandbox's
			"tcp":             "refused",
		}, cm.Data, "region %s", r)
	}
	mustFerry(t, "app", "delete", "plugged", "--cascade")
}
