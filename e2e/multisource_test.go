package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMultiSourceChartWithGitValues: a multi-source app takes its chart
// from the stack's Helm repository and its values from
// $values/envs/prod.yaml in a Git repository; a commit changing only that
// values file renders again and syncs, and status.sync.revisions holds
// both sources' revisions.
func TestMultiSourceChartWithGitValues(t *testing.T) {
	const name, ns = "multisrc", "multisrc"
	publishChartFiles(t, "msweb", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: msweb\nversion: 1.0.0\n",
		"values.yaml": "env: chart-default\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-msweb\n" +
			"data:\n  env: {{ .Values.env | quote }}\n  version: {{ .Chart.Version | quote }}\n",
	})

	values := newRepo(t, "multisrc-values")
	values.write(map[string]string{"envs/prod.yaml": "env: prod-1\n", "README.md": "values\n"})
	first := values.commitAndPush("prod values")

	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  pollInterval: 1h\n  sources:\n", name)
	fmt.Fprintf(&b, "  - repoURL: %s\n    chart: msweb\n    targetRevision: \"1.*\"\n    helm:\n      valueFiles: [$values/envs/prod.yaml]\n", stack.HelmRepoURL)
	fmt.Fprintf(&b, "  - repoURL: %s\n    targetRevision: main\n    ref: values\n  destinations:\n", values.URL)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, ns)
	}
	b.WriteString("  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n    syncOptions: [CreateNamespace=true]\n")
	startWorker(t)
	mustFerry(t, "app", "apply", "-f", writeFile(t, b.String()))

	st := waitApp(t, name, "1.0.0,"+first, 3*time.Minute)
	require.Equal(t, []string{"1.0.0", first}, st.Sync.Revisions)
	for _, r := range regions {
		require.Equal(t, "prod-1", configMapEnv(t, r, ns, name+"-msweb"), r)
	}
	out := mustFerry(t, "app", "get", name)
	require.Contains(t, out, "Source 0:      "+stack.HelmRepoURL+" chart msweb, target 1.*, at 1.0.0")
	require.Contains(t, out, "Source 1:      "+values.URL+" files only (ref values), target main, at "+first[:8])

	// Only the values file changes: the chart's version stays, the app
	// renders again and syncs.
	values.write(map[string]string{"envs/prod.yaml": "env: prod-2\n"})
	second := values.commitAndPush("prod values, second")
	mustFerry(t, "app", "refresh", name)
	st = waitApp(t, name, "1.0.0,"+second, 3*time.Minute)
	require.Equal(t, []string{"1.0.0", second}, st.Sync.Revisions)
	for _, r := range regions {
		require.Equal(t, "prod-2", configMapEnv(t, r, ns, name+"-msweb"), r)
	}
	require.GreaterOrEqual(t, len(st.History), 2)
	last := st.History[len(st.History)-1]
	require.Equal(t, []string{"1.0.0", second}, last.Revisions)
	require.Len(t, last.Sources, 2)
	recordHistories(t, name)
}

// configMapEnv is the env the chart's ConfigMap names in a region.
// publishChartFiles writes a chart's files and publishes it to the stack's
// Helm repository.
func publishChartFiles(t *testing.T, name string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for p, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644))
	}
	_, err := stack.PublishChart(context.Background(), dir)
	require.NoError(t, err)
}

func configMapEnv(t *testing.T, region, namespace, name string) string {
	t.Helper()
	cm, err := kubeClient(t, region).CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	return cm.Data["env"]
}
