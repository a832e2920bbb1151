package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKustomizeHelmCharts: a kustomization that inflates a chart of the
// stack's Helm repository (helmCharts, as real repositories hold them) is
// refused by a worker without --enable-helm, naming the option; with
// argocd-cm's kustomize.buildOptions: --enable-helm the worker fetches the
// chart through its chart source and the render inflates it in the
// sandbox: the app syncs the chart's ConfigMap with the kustomization's
// values and name prefix in every region.
func TestKustomizeHelmCharts(t *testing.T) {
	const name = "kzhelm"
	publishChartFiles(t, "kzweb", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: kzweb\nversion: 1.0.0\n",
		"values.yaml": "env: chart-default\ntier: web\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\n" +
			"data:\n  env: {{ .Values.env | quote }}\n  tier: {{ .Values.tier | quote }}\n",
	})

	repo := newRepo(t, name)
	repo.write(map[string]string{"app/kustomization.yaml": fmt.Sprintf(`namePrefix: prod-
helmCharts:
- name: kzweb
  repo: %s
  version: 1.0.0
  releaseName: shop
  valuesInline:
    env: prod
  namespace: kzhelm
`, stack.HelmRepoURL)})
	sha := repo.commitAndPush("a chart through kustomize")

	plain := startWorker(t)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "1h")))
	eventually(t, 2*time.Minute, "the render refused, naming --enable-helm", func() (bool, string) {
		out, _ := ferry(t, "app", "get", name)
		return strings.Contains(out, "Kustomize helmCharts need --enable-helm"), out
	})
	plain.stop()

	argocdCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  kustomize.buildOptions: --enable-helm\n"
	startWorker(t, "--resource-customizations", writeFile(t, argocdCM))
	mustFerry(t, "app", "refresh", name)
	waitApp(t, name, sha, 3*time.Minute)
	for _, r := range regions {
		require.Equal(t, "prod", configMapEnv(t, r, name, "prod-shop-settings"), r)
	}
	mustFerry(t, "app", "delete", name, "--cascade")
}
