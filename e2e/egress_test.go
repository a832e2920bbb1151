package e2e

import (
	"context"
	"fmt"
	"github.com/ferry-gitops/ferry/internal/app"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionSays waits until app's status has a ComparisonError holding
// every one of wants.
func conditionSays(t *testing.T, name string, wants ...string) {
	t.Helper()
	c := temporalClient(t)
	eventually(t, 3*time.Minute, name+"'s render fails naming "+strings.Join(wants, ", "), func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			ok := cond.Type == "ComparisonError"
			for _, w := range wants {
				ok = ok && strings.Contains(cond.Message, w)
			}
			if ok {
				t.Logf("%s: %s", name, cond.Message)
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", v.Status.Conditions)
	})
}

// TestPluginEgress: a plugin whose operator listed a loopback server
// (--plugin-egress, and --render-allow-hosts for the loopback address, as
// the stack's own services are listed) fetches from it in the render
// sandbox and its app syncs with what it fetched; the same plugin asked
// for a server off its list fails, the app's status naming the host and
// the flag, and that server receives nothing.
func TestPluginEgress(t *testing.T) {
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "fetched-"+strings.TrimPrefix(r.URL.Path, "/"))
	}))
	defer allowed.Close()
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	allowedHost, otherHost := allowed.Listener.Addr().String(), other.Listener.Addr().String()

	dir := t.TempDir()
	plugin, err := os.ReadFile("../internal/egress/testdata/fetch-plugin.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fetch.yaml"), plugin, 0o644))
	args := append(allowHosts(t, allowed.URL, other.URL), "--plugin-dir", dir, "--plugin-egress", "fetch="+allowedHost)
	startWorker(t, args...)

	repo := newRepo(t, "plugin-egress")
	repo.write(map[string]string{"app/README.md": "rendered by the fetch plugin\n"})
	sha := repo.commitAndPush("a fetching plugin app")
	appDoc := func(name, u string) string {
		doc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  source:
    repoURL: %s
    targetRevision: main
    path: app
    plugin:
      name: fetch
      parameters:
        - {name: url, string: "%s"}
  destination: {name: %s, namespace: egress}
  syncPolicy:
    automated: {}
    syncOptions: [CreateNamespace=true]
`, name, repo.URL, u, regions[0])
		return doc
	}
	mustFerry(t, "app", "apply", "-f", writeFile(t, appDoc("egress-ok", allowed.URL+"/prod")))
	waitSyncedAt(t, "egress-ok", sha)
	cm, err := kubeClient(t, regions[0]).CoreV1().ConfigMaps("egress").Get(context.Background(), "egress-ok", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "fetched-prod", cm.Data["body"], "what the plugin fetched through the egress proxy")

	mustFerry(t, "app", "apply", "-f", writeFile(t, appDoc("egress-refused", other.URL+"/x")))
	conditionSays(t, "egress-refused", otherHost+" is not on plugin fetch's egress list", "--plugin-egress fetch=")
	require.Zero(t, otherHits.Load(), "the host off the plugin's list received requests")

	mustFerry(t, "app", "delete", "egress-refused")
	mustFerry(t, "app", "delete", "egress-ok", "--cascade")
}

// TestHelmValueFileFromURL: a Helm app whose value file is served over
// HTTP by a loopback server the worker's host policy lists syncs with its
// values, and with the new ones after the file changes (next refresh); a
// value file of a private address the policy does not list is refused,
// the status naming the app, the field, the host and the flag.
func TestHelmValueFileFromURL(t *testing.T) {
	var body atomic.Value
	body.Store("greeting: from-the-url\n")
	values := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, body.Load().(string))
	}))
	defer values.Close()
	startWorker(t, allowHosts(t, values.URL)...)

	repo := newRepo(t, "helm-value-url")
	repo.write(map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"chart/values.yaml":       "greeting: from-the-chart\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting }}\n",
	})
	sha := repo.commitAndPush("a chart")
	appDoc := func(name, valueFile string) string {
		return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  source:
    repoURL: %s
    targetRevision: main
    path: chart
    helm:
      valueFiles: ["%s"]
  destination: {name: %s, namespace: value-url}
  syncPolicy:
    automated: {}
    syncOptions: [CreateNamespace=true]
`, name, repo.URL, valueFile, regions[0])
	}
	mustFerry(t, "app", "apply", "-f", writeFile(t, appDoc("value-url", values.URL+"/values.yaml")))
	waitSyncedAt(t, "value-url", sha)
	greeting := func() string {
		cm, err := kubeClient(t, regions[0]).CoreV1().ConfigMaps("value-url").Get(context.Background(), "value-url", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return cm.Data["greeting"]
	}
	require.Equal(t, "from-the-url", greeting())

	// A changed file is a change without a commit: the refresh renders it
	// and shows the app OutOfSync; automated sync does not sync the same
	// revision again (as Argo CD's), a sync does.
	body.Store("greeting: changed\n")
	mustFerry(t, "app", "refresh", "value-url")
	c := temporalClient(t)
	eventually(t, 2*time.Minute, "value-url OutOfSync after its value file changed", func() (bool, string) {
		v, err := queryView(t, c, "value-url")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusOutOfSync, string(v.Status.Sync.Status)
	})
	mustFerry(t, "app", "sync", "value-url", "--wait")
	require.Equal(t, "changed", greeting(), "the changed value file synced")

	mustFerry(t, "app", "apply", "-f", writeFile(t, appDoc("value-url-refused", "http://10.255.255.1/values.yaml")))
	conditionSays(t, "value-url-refused", `app "value-url-refused" spec.source.helm.valueFiles[0] names http://10.255.255.1/values.yaml`,
		"10.255.255.1 is a private address", "--render-allow-hosts")

	mustFerry(t, "app", "delete", "value-url-refused")
	mustFerry(t, "app", "delete", "value-url", "--cascade")
}
