package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPlaceholderRepoURLIsKeptAndNamed: an Application as CNOE's stacks
// write it, with a source at cnoe://NAME (a placeholder that idpbuilder
// rewrites), is accepted as Argo CD accepts it: ferry app apply warns with
// the app, the field and the forms to write, and the app shows a
// ComparisonError naming the scheme instead of syncing. Once the URL is
// written as a Git URL, the same app syncs and the error goes.
func TestPlaceholderRepoURLIsKeptAndNamed(t *testing.T) {
	const name = "placeholder"
	repo := newRepo(t, "placeholder-manifests")
	repo.write(map[string]string{"manifests/cm.yaml": configMap("placeholder-settings", "v1")})
	sha := repo.commitAndPush("v1")

	spec := func(second string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  namespace: argocd\nspec:\n  project: default\n  pollInterval: 1h\n  sources:\n", name)
		fmt.Fprintf(&b, "  - repoURL: %s\n    targetRevision: main\n    path: manifests\n", repo.URL)
		fmt.Fprintf(&b, "  - repoURL: %s\n    targetRevision: HEAD\n    ref: extra\n  destinations:\n", second)
		for _, r := range regions {
			fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, name)
		}
		b.WriteString("  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n    syncOptions: [CreateNamespace=true]\n")
		return b.String()
	}
	startWorker(t)
	out := mustFerry(t, "app", "apply", "-f", writeFile(t, spec("cnoe://jupyterhub")))
	require.Contains(t, out, `ferry: warning: application "placeholder": spec.sources[1].repoURL: "cnoe://jupyterhub": scheme "cnoe" is no Git transport`)

	c := temporalClient(t)
	eventually(t, 2*time.Minute, "the app shows why it cannot fetch cnoe://jupyterhub", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			if cond.Type == "ComparisonError" && strings.Contains(cond.Message, `repository cnoe://jupyterhub: scheme "cnoe" is not one Ferry fetches over`) {
				return v.Status.Sync.Revision == "", fmt.Sprintf("revision %q", v.Status.Sync.Revision)
			}
		}
		return false, fmt.Sprintf("conditions %+v", v.Status.Conditions)
	})
	require.Contains(t, mustFerry(t, "app", "get", name), `scheme "cnoe" is not one Ferry fetches over`)

	out = mustFerry(t, "app", "apply", "-f", writeFile(t, spec(repo.URL)))
	require.NotContains(t, out, "warning")
	st := waitApp(t, name, sha+","+sha, 3*time.Minute)
	for _, cond := range st.Conditions {
		require.NotEqual(t, "ComparisonError", cond.Type, cond.Message)
	}
}
