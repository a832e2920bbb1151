package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

// TestWebhookRefreshesEverySourceOfAnApp: an app of two Git directory
// sources in two repositories, polling once an hour, is found by the
// FerryRepoURLs search attribute under either repository, and a signed
// push delivery for the second repository alone refreshes it at once: it
// syncs the second source's new commit.
func TestWebhookRefreshesEverySourceOfAnApp(t *testing.T) {
	const name, ns = "webhook-sources", "webhook-sources"
	hookAddr := freeAddr(t)
	// The repository poll off: this test's refreshes are the webhook's.
	startWorkerEnv(t, []string{"FERRY_WEBHOOK_GITHUB_SECRET=" + webhookSecret}, "--webhook-addr", hookAddr, "--repo-poll-interval", "0")
	configMap := func(cm, env string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + cm + "\ndata:\n  env: " + env + "\n"
	}
	base := newRepo(t, "webhook-sources-base")
	base.write(map[string]string{"base/cm.yaml": configMap("base", "base-1")})
	baseSHA := base.commitAndPush("base")
	extra := newRepo(t, "webhook-sources-extra")
	extra.write(map[string]string{"extra/cm.yaml": configMap("extra", "extra-1")})
	extra1 := extra.commitAndPush("extra")

	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  pollInterval: 1h\n  sources:\n", name)
	fmt.Fprintf(&b, "  - {repoURL: %s, targetRevision: main, path: base}\n", base.URL)
	fmt.Fprintf(&b, "  - {repoURL: %s, targetRevision: main, path: extra}\n  destinations:\n", extra.URL)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, ns)
	}
	b.WriteString("  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n    syncOptions: [CreateNamespace=true]\n")
	mustFerry(t, "app", "apply", "-f", writeFile(t, b.String()))
	waitApp(t, name, baseSHA+","+extra1, 3*time.Minute)

	// Either repository finds the app, as the webhook and a saved view do.
	c := temporalClient(t)
	for _, repo := range []string{base.URL, extra.URL} {
		eventually(t, time.Minute, "the app listed under FerryRepoURLs = "+repo, func() (bool, string) {
			resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
				Query: fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'", contract.SearchRepoURLs, repo)})
			if err != nil {
				return false, err.Error()
			}
			var ids []string
			for _, e := range resp.Executions {
				ids = append(ids, e.GetExecution().GetWorkflowId())
			}
			return len(ids) == 1 && ids[0] == contract.WorkflowID(name), fmt.Sprint(ids)
		})
	}

	h := &hook{t: t, url: "http://" + hookAddr + webhook.Path, repo: extra}
	eventually(t, 30*time.Second, "webhook up", func() (bool, string) {
		resp, err := http.Get(h.url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusMethodNotAllowed, resp.Status
	})
	// A commit to the second repository and its delivery: the app, whose
	// next poll is an hour away, syncs it.
	extra.write(map[string]string{"extra/cm.yaml": configMap("extra", "extra-2")})
	extra2 := extra.commitAndPush("extra, second")
	require.Equal(t, http.StatusAccepted, h.post("POST", webhookSecret, h.githubPush(extra1, extra2, "extra/cm.yaml")))
	st := waitApp(t, name, baseSHA+","+extra2, 5*time.Minute)
	require.Equal(t, []string{baseSHA, extra2}, st.Sync.Revisions)
	for _, r := range regions {
		require.Equal(t, "extra-2", configMapEnv(t, r, ns, "extra"), r)
		require.Equal(t, "base-1", configMapEnv(t, r, ns, "base"), r)
	}
	recordHistories(t, name)
}
