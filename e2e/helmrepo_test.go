package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chartFiles is a chart holding one ConfigMap that names the chart's
// version; deps are Chart.yaml dependencies lines.
func chartFiles(prefix, name, version, deps string) map[string]string {
	return map[string]string{
		prefix + "Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n%s", name, version, deps),
		prefix + "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + name +
			"\ndata:\n  version: {{ .Chart.Version | quote }}\n",
	}
}

// publishChart publishes a chart to the stack's Helm repository and OCI
// registry, as `ferry dev publish-chart` does.
func publishChart(t *testing.T, name, version, deps string) {
	t.Helper()
	publishChartFiles(t, name, chartFiles("", name, version, deps))
}

// chartApp is an automated Application of a chart from a repository.
func chartApp(name, repoURL, chart, revision, namespace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  pollInterval: 1h\n", name)
	fmt.Fprintf(&b, "  source:\n    repoURL: %s\n    chart: %s\n    targetRevision: %q\n  destinations:\n", repoURL, chart, revision)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, namespace)
	}
	b.WriteString("  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n    syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

// configMapVersion is the version the chart's ConfigMap names in a region.
func configMapVersion(t *testing.T, region, namespace, name string) string {
	t.Helper()
	cm, err := kubeClient(t, region).CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	return cm.Data["version"]
}

// indexRequests counts every GET of the Helm repository's index.yaml,
// answered in full or 304.
func indexRequests() int64 { return stack.HelmIndexFetches() + stack.HelmIndexNotModified() }

// TestChartFromHelmRepository: an app of a chart from the stack's Helm
// repository with targetRevision 1.* syncs the newest 1.x; publishing 1.1.0
// and refreshing moves it there, as a commit would; 20 apps on the
// repository cost one index request per poll interval, not 20.
func TestChartFromHelmRepository(t *testing.T) {
	publishChart(t, "web", "1.0.0", "")
	publishChart(t, "web", "2.0.0", "") // outside 1.*
	startWorker(t)

	mustFerry(t, "app", "apply", "-f", writeFile(t, chartApp("web", stack.HelmRepoURL, "web", "1.*", "web")))
	waitApp(t, "web", "1.0.0", 3*time.Minute)
	for _, r := range regions {
		require.Equal(t, "1.0.0", configMapVersion(t, r, "web", "web-web"), r)
	}

	publishChart(t, "web", "1.1.0", "")
	mustFerry(t, "app", "refresh", "web")
	st := waitApp(t, "web", "1.1.0", 3*time.Minute)
	require.Equal(t, "1.1.0", st.Sync.Revision)
	for _, r := range regions {
		require.Equal(t, "1.1.0", configMapVersion(t, r, "web", "web-web"), r)
	}
	out := mustFerry(t, "app", "get", "web")
	require.Contains(t, out, "1.1.0")

	// 20 apps on the repository, within one poll interval (1h) of the last
	// listing: their resolves share it, the first of each new app too.
	before := indexRequests()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			name := fmt.Sprintf("web-%02d", i)
			if _, err := ferry(t, "app", "apply", "-f", writeFileNamed(t, name, chartApp(name, stack.HelmRepoURL+"/", "web", "1.*", name))); err != nil {
				t.Errorf("apply %s: %v", name, err)
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		waitApp(t, fmt.Sprintf("web-%02d", i), "1.1.0", 5*time.Minute)
	}
	require.LessOrEqual(t, indexRequests()-before, int64(1), "20 apps on one Helm repository: at most one index request per interval")
}

// TestChartFromOCIRegistry: the same chart from the stack's OCI registry, by
// tag and by constraint.
func TestChartFromOCIRegistry(t *testing.T) {
	publishChart(t, "ociweb", "1.0.0", "")
	publishChart(t, "ociweb", "1.1.0", "")
	startWorker(t)
	oci := "oci://" + stack.OCIRegistry + "/charts"
	mustFerry(t, "app", "apply", "-f", writeFile(t, chartApp("oci-tag", oci, "ociweb", "1.0.0", "oci-tag")))
	mustFerry(t, "app", "apply", "-f", writeFile(t, chartApp("oci-constraint", oci, "ociweb", ">=1.0.0 <2.0.0", "oci-constraint")))
	// As real files write it: the registry's host alone in repoURL (Argo
	// CD's enableOCI form), the rest of the path in chart.
	mustFerry(t, "app", "apply", "-f", writeFile(t, chartApp("oci-path", stack.OCIRegistry, "charts/ociweb", "1.*", "oci-path")))
	waitApp(t, "oci-tag", "1.0.0", 3*time.Minute)
	waitApp(t, "oci-constraint", "1.1.0", 3*time.Minute)
	waitApp(t, "oci-path", "1.1.0", 3*time.Minute)
	for _, r := range regions {
		require.Equal(t, "1.0.0", configMapVersion(t, r, "oci-tag", "oci-tag-ociweb"), r)
		require.Equal(t, "1.1.0", configMapVersion(t, r, "oci-constraint", "oci-constraint-ociweb"), r)
		require.Equal(t, "1.1.0", configMapVersion(t, r, "oci-path", "oci-path-ociweb"), r)
	}
}

// TestUmbrellaChartDependencies: a chart in Git whose dependency comes from
// the Helm repository syncs with it; one asking for a version the
// repository lacks fails its render naming the chart and the version.
func TestUmbrellaChartDependencies(t *testing.T) {
	publishChart(t, "lib", "1.2.0", "")
	repo := newRepo(t, "umbrella")
	dep := func(v string) string {
		return fmt.Sprintf("dependencies:\n- name: lib\n  version: %q\n  repository: %s\n", v, stack.HelmRepoURL)
	}
	files := chartFiles("good/", "umbrella", "0.1.0", dep("1.*"))
	for k, v := range chartFiles("missing/", "umbrella", "0.2.0", dep("9.*")) {
		files[k] = v
	}
	repo.write(files)
	repo.commitAndPush("umbrella charts")
	startWorker(t)

	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("umbrella", repo.URL, "good", "umbrella", true, "1h")))
	waitApp(t, "umbrella", "", 3*time.Minute)
	for _, r := range regions {
		require.Equal(t, "1.2.0", configMapVersion(t, r, "umbrella", "umbrella-lib"), r)
		require.Equal(t, "0.1.0", configMapVersion(t, r, "umbrella", "umbrella-umbrella"), r)
	}

	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("umbrella-missing", repo.URL, "missing", "umbrella-missing", true, "1h")))
	c := temporalClient(t)
	eventually(t, 3*time.Minute, "umbrella-missing reports the missing dependency", func() (bool, string) {
		v, err := queryView(t, c, "umbrella-missing")
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			if strings.Contains(cond.Message, `chart dependency "lib" version "9.*"`) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Conditions)
	})
}

func writeFileNamed(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}
