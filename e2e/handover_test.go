package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// greetPlugin is a config-management plugin that a worker without
// --plugin-dir cannot render: a ConfigMap greeting the app.
const greetPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata: {name: greet}
spec:
  version: v1
  generate:
    command: [sh, -c]
    args: ["printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\ndata:\n  hello: handed-over-%s\n' \"$ARGOCD_APP_NAME\""]
  discover:
    fileName: greet.marker
`

// TestRegionWorkersNeverRender: the control worker has the plugin; the
// worker of every region is no control worker and has no --plugin-dir, no
// Git server its host policy admits and a FERRY_CACHE_KEY of its own, so
// it could neither render nor read the control worker's cache. The plugin
// app still syncs in every region: the control side hands the manifests
// over, sealed to the region worker's key, and the handover's history holds
// none of them in clear.
func TestRegionWorkersNeverRender(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "greet.yaml"), []byte(greetPlugin), 0o644))
	startWorkerWithEnv(t, nil, "--control", "--plugin-dir", dir)
	var roles []string
	for _, r := range regions {
		roles = append(roles, "--region", r)
	}
	regionWorker := startWorkerWithEnv(t, []string{"FERRY_CACHE_KEY=" + strings.Repeat("ab", 32), "FERRY_RENDER_ALLOW_HOSTS="}, roles...)

	repo := newRepo(t, "handover")
	repo.write(map[string]string{"app/greet.marker": ""})
	sha := repo.commitAndPush("a plugin app")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("handover", repo.URL, "app", "handover", true, "3m")))
	waitApp(t, "handover", sha, 3*time.Minute)
	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps("handover").Get(context.Background(), "greeting", metav1.GetOptions{})
		require.NoError(t, err, "region %s", r)
		require.Equal(t, "handed-over-handover", cm.Data["hello"], "region %s", r)
	}

	// The handovers ran, and their histories hold ciphertext only.
	c := temporalClient(t)
	list, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowType = '" + contract.HandOverWorkflow + "'"})
	require.NoError(t, err)
	require.NotEmpty(t, list.Executions, "the region worker asked for the manifests")
	for _, ex := range list.Executions {
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, ex.Status, "handover %s", ex.Execution.WorkflowId)
		it := c.GetWorkflowHistory(context.Background(), ex.Execution.WorkflowId, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			require.NotContains(t, ev.String(), "handed-over-", "handover %s: event %d holds the manifests in clear", ex.Execution.WorkflowId, ev.EventId)
		}
	}
	recordWorkflowHistories(t, list.Executions[0].Execution.WorkflowId, "handover")

	log, err := os.ReadFile(regionWorker.Log)
	require.NoError(t, err)
	require.Contains(t, string(log), "this worker renders nothing")
	gitHost := strings.TrimPrefix(strings.TrimPrefix(repo.URL, "http://"), "https://")
	gitHost = gitHost[:strings.Index(gitHost, "/")]
	require.NotContains(t, string(log), gitHost, "the region worker never names the Git server")
	require.NotContains(t, string(log), `no plugin "greet"`)
	mustFerry(t, "app", "delete", "handover", "--cascade")
}
