package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/app"
)

const corpus = "../../shared/corpus/argocd-example-apps"

// appYAML is an Application for the repo, to every test region.
func appYAML(name, repoURL, path, namespace string, automated bool, poll string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n", name)
	fmt.Fprintf(&b, "  pollInterval: %s\n  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n  destinations:\n", poll, repoURL, path)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, namespace)
	}
	b.WriteString("  syncPolicy:\n")
	if automated {
		b.WriteString("    automated: {prune: true, selfHeal: true}\n")
	}
	b.WriteString("    syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "app.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func kubeClient(t *testing.T, region string) kubernetes.Interface {
	t.Helper()
	cfg, err := stack.RestConfig(region)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

func waitApp(t *testing.T, name, sha string, timeout time.Duration) *app.Status {
	t.Helper()
	c := temporalClient(t)
	var st *app.Status
	eventually(t, timeout, "app "+name+" Synced and Healthy at "+short(sha), func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		st = &v.Status
		ok := v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy &&
			(sha == "" || v.Status.Sync.Revision == sha)
		for _, r := range regions {
			ok = ok && v.Status.Regions[r].Sync == app.SyncStatusSynced && (sha == "" || v.Status.Regions[r].Revision == sha)
		}
		return ok, fmt.Sprintf("%s/%s at %s, regions %+v, conditions %+v", v.Status.Sync.Status, v.Status.Health.Status,
			short(v.Status.Sync.Revision), v.Status.Regions, v.Status.Conditions)
	})
	return st
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

func scrape(t *testing.T, addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// TestEndToEnd: an automated app reaches Synced and Healthy in every region;
// a new commit arrives by the refresh signal, the next by the poll timer.
func TestEndToEnd(t *testing.T) {
	metricsAddr := freeAddr(t)
	startWorker(t, "--metrics-addr", metricsAddr)
	repo := newRepo(t, "guestbook")
	repo.copyDir(filepath.Join(corpus, "guestbook"), "guestbook")
	sha1 := repo.commitAndPush("guestbook")

	file := writeFile(t, appYAML("guestbook", repo.URL, "guestbook", "guestbook", true, "4s"))
	mustFerry(t, "app", "apply", "-f", file)
	st := waitApp(t, "guestbook", sha1, 3*time.Minute)
	require.Len(t, st.Resources, 2*len(regions), "a Deployment and a Service per region")
	for _, r := range regions {
		d, err := kubeClient(t, r).AppsV1().Deployments("guestbook").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
		require.NoError(t, err, "region %s", r)
		require.Equal(t, d.Status.Replicas, d.Status.AvailableReplicas, "region %s", r)
	}
	out := mustFerry(t, "app", "get", "guestbook")
	for _, r := range regions {
		require.Contains(t, out, r)
	}

	// A new commit, then refresh.
	repo.write(map[string]string{"guestbook/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  k: v\n"})
	sha2 := repo.commitAndPush("add a ConfigMap")
	mustFerry(t, "app", "refresh", "guestbook")
	waitApp(t, "guestbook", sha2, time.Minute)

	// A commit that removes it, and no signal: the poll timer finds it; prune removes the ConfigMap.
	repo.git("rm", "-q", "guestbook/extra.yaml")
	sha3 := repo.commitAndPush("remove the ConfigMap")
	waitApp(t, "guestbook", sha3, time.Minute)
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("guestbook").Get(context.Background(), "extra", metav1.GetOptions{})
		require.Error(t, err, "pruned in region %s", r)
	}
	history := mustFerry(t, "app", "history", "guestbook")
	require.Contains(t, history, sha3)
	eventually(t, time.Minute, "metrics", func() (bool, string) {
		m := scrape(t, metricsAddr)
		ok := strings.Contains(m, "ferry_app_reconcile_total{") && strings.Contains(m, `ferry_app_sync_total{`) &&
			strings.Contains(m, `phase="Succeeded"`) && strings.Contains(m, "ferry_app_sync_duration_seconds_bucket{") &&
			strings.Contains(m, `ferry_apps{health_status="Healthy",sync_status="Synced"}`)
		return ok, "ferry_ metrics missing"
	})
	// Per-app metrics, as Argo CD's argocd_app_info and argocd_app_sync_total.
	sorted := slices.Sorted(slices.Values(regions))
	info := `ferry_app_info{dest_regions="` + strings.Join(sorted, ",") + `",health_status="Healthy",name="guestbook",` +
		`operation="Succeeded",project="default",repo="` + repo.URL + `",sync_status="Synced"} 1`
	eventually(t, time.Minute, "per-app metrics", func() (bool, string) {
		m := scrape(t, metricsAddr)
		synced := metricLine(m, "ferry_app_sync_total{", `name="guestbook"`, `phase="Succeeded"`, `project="default"`)
		reconciled := metricLine(m, "ferry_app_reconcile_total{", `name="guestbook"`, `project="default"`)
		return strings.Contains(m, info) && synced && reconciled, "want " + info + " and ferry_app_sync_total, ferry_app_reconcile_total of guestbook"
	})

	mustFerry(t, "app", "delete", "guestbook", "--cascade")
	for _, r := range regions {
		eventually(t, time.Minute, "guestbook deleted in "+r, func() (bool, string) {
			_, err := kubeClient(t, r).AppsV1().Deployments("guestbook").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
			return err != nil, fmt.Sprint(err)
		})
	}
	recordHistories(t, "guestbook")
}

// metricLine tells whether a line of the scrape m starts with prefix and
// holds every label.
func metricLine(m, prefix string, labels ...string) bool {
	for _, line := range strings.Split(m, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line, l)
		}
		if all {
			return true
		}
	}
	return false
}
