package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestManifestGeneratePathsSpareRenders: two apps of one monorepo carry
// argocd.argoproj.io/manifest-generate-paths ".", one of a single source
// (apps/web) and one of two (apps/api and apps/db). With no webhook to
// list a push's files, a refresh finds the new commit and the control
// worker compares it with the last rendered one: a commit of README.md
// alone renders neither app, yet both show and sync the new commit; a
// commit under apps/web renders that app alone; one under apps/db renders
// the app of two sources alone, and each syncs what it changed.
func TestManifestGeneratePathsSpareRenders(t *testing.T) {
	metrics := freeAddr(t)
	startWorker(t, "--metrics-addr", metrics)
	repo := newRepo(t, "genpaths")
	repo.write(map[string]string{"README.md": "monorepo\n", "apps/web/cm.yaml": configMap("web", "v1"),
		"apps/api/cm.yaml": configMap("api", "v1"), "apps/db/cm.yaml": configMap("db", "v1")})
	sha := repo.commitAndPush("three apps")
	const single, multi = "genpaths-web", "genpaths-backend"
	annotated := "metadata:\n  annotations:\n    argocd.argoproj.io/manifest-generate-paths: .\n  name:"
	mustFerry(t, "app", "apply", "-f", writeFile(t, strings.Replace(appYAML(single, repo.URL, "apps/web", single, true, "1h"), "metadata:\n  name:", annotated, 1)))
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  annotations:\n", multi)
	fmt.Fprintf(&b, "    argocd.argoproj.io/manifest-generate-paths: .\nspec:\n  pollInterval: 1h\n  sources:\n")
	for _, p := range []string{"apps/api", "apps/db"} {
		fmt.Fprintf(&b, "  - {repoURL: %s, targetRevision: main, path: %s}\n", repo.URL, p)
	}
	b.WriteString("  destinations:\n")
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, multi)
	}
	b.WriteString("  syncPolicy:\n    automated: {prune: true}\n    syncOptions: [CreateNamespace=true]\n")
	mustFerry(t, "app", "apply", "-f", writeFile(t, b.String()))
	waitApp(t, single, sha, 3*time.Minute)
	waitApp(t, multi, sha+","+sha, 3*time.Minute)

	step := func(what string, files map[string]string, wantRenders, wantSpared int64) string {
		t.Helper()
		renders, spared := renderCount(t, metrics), metricValue(scrape(t, metrics), "ferry_render_spared_total")
		repo.write(files)
		sha := repo.commitAndPush(what)
		mustFerry(t, "app", "refresh", single)
		mustFerry(t, "app", "refresh", multi)
		waitApp(t, single, sha, 2*time.Minute)
		waitApp(t, multi, sha+","+sha, 2*time.Minute)
		require.Equal(t, wantRenders, renderCount(t, metrics)-renders, "%s: renders", what)
		require.Equal(t, float64(wantSpared), metricValue(scrape(t, metrics), "ferry_render_spared_total")-max(spared, 0), "%s: renders spared", what)
		return sha
	}
	step("README alone", map[string]string{"README.md": "monorepo, said better\n"}, 0, 2)
	step("the web app", map[string]string{"apps/web/cm.yaml": configMap("web", "v2")}, 1, 1)
	step("the database", map[string]string{"apps/db/cm.yaml": configMap("db", "v2")}, 2, 1) // one render per source
	for _, r := range regions {
		require.Equal(t, "v2", configMapVersion(t, r, single, "web"), r)
		require.Equal(t, "v1", configMapVersion(t, r, multi, "api"), r)
		require.Equal(t, "v2", configMapVersion(t, r, multi, "db"), r)
	}
	recordHistories(t, single)
	recordHistories(t, multi)
	mustFerry(t, "app", "delete", single, "--cascade")
	mustFerry(t, "app", "delete", multi, "--cascade")
}
