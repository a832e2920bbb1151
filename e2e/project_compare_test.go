package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

const webService = `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
  selector: {app: web}
`

// teamCProject permits repos and the destination us-east-1/team-c when
// wide, nothing when not (as Argo CD's TestPermissions sets sourceRepos and
// destinations to nil), and blacklists the kinds given.
func teamCProject(repoURL string, wide bool, blacklist ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: team-c}\nspec:\n")
	if wide {
		fmt.Fprintf(&b, "  sourceRepos: [%s]\n  destinations:\n  - {name: us-east-1, namespace: team-c}\n", repoURL)
	}
	if len(blacklist) > 0 {
		b.WriteString("  namespaceResourceBlacklist:\n")
		for _, k := range blacklist {
			fmt.Fprintf(&b, "  - {group: \"\", kind: %s}\n", k)
		}
	}
	return b.String()
}

// TestProjectAppliesToTheCompare follows Argo CD's TestPermissions and
// TestNotPermittedResources: an app synced under project team-c; the
// project is edited to permit neither its repository nor its destination,
// and the next refresh shows Argo CD's two InvalidSpecError conditions in
// its words, sync and health Unknown. Permitted again but with Services
// blacklisted, the conditions go, and the app's Service, which is still
// in the cluster, shows Unknown (Missing, as Argo CD hides its live
// object) and keeps the app OutOfSync, while its ConfigMap is Synced.
func TestProjectAppliesToTheCompare(t *testing.T) {
	startWorker(t)
	cs := kubeClient(t, "us-east-1")
	ctx := context.Background()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-c"}}, metav1.CreateOptions{})
	require.NoError(t, err, "the platform team creates the namespace")
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), "team-c", metav1.DeleteOptions{}) })

	repo := newRepo(t, "team-c")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/svc.yaml": webService})
	repo.commitAndPush("a ConfigMap and a Service")
	mustFerry(t, "project", "apply", "-f", writeFile(t, teamCProject(repo.URL, true)))
	appFile := strings.Replace(projectAppYAML("team-c-web", repo.URL, "us-east-1", "team-c"), "project: team-a", "project: team-c", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appFile))
	mustFerry(t, "app", "sync", "team-c-web", "--wait")
	c := temporalClient(t)
	v, err := queryView(t, c, "team-c-web")
	require.NoError(t, err)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status)

	// The project no longer permits the app's repository nor destination.
	mustFerry(t, "project", "apply", "-f", writeFile(t, teamCProject(repo.URL, false)))
	before := reconciledAt(t, "team-c-web")
	mustFerry(t, "app", "refresh", "team-c-web")
	waitReconciledAfter(t, "team-c-web", before)
	v, err = queryView(t, c, "team-c-web")
	require.NoError(t, err)
	sourceError := fmt.Sprintf("application repo %s is not permitted in project 'team-c'", repo.URL)
	destinationError := "application destination server 'us-east-1' and namespace 'team-c' do not match any of the allowed destinations in project 'team-c'"
	require.ElementsMatch(t, []app.Condition{
		{Type: "InvalidSpecError", Message: sourceError},
		{Type: "InvalidSpecError", Message: destinationError},
	}, invalidSpec(v.Status.Conditions), "%+v", v.Status.Conditions)
	require.Equal(t, app.SyncStatusUnknown, v.Status.Sync.Status)
	require.Equal(t, app.HealthUnknown, v.Status.Health.Status)
	out := mustFerry(t, "app", "get", "team-c-web")
	require.Contains(t, out, destinationError)
	// Argo CD empties the app's resource tree.
	out = mustFerry(t, "app", "resources", "team-c-web")
	require.Empty(t, orphanRows(out, "No"), "no resource is listed: %s", out)
	require.Contains(t, out, "InvalidSpecError: "+sourceError)

	// Permitted again, but Services may no longer be managed.
	mustFerry(t, "project", "apply", "-f", writeFile(t, teamCProject(repo.URL, true, "Service")))
	before = reconciledAt(t, "team-c-web")
	mustFerry(t, "app", "refresh", "team-c-web")
	waitReconciledAfter(t, "team-c-web", before)
	eventually(t, time.Minute, "the app compared under the narrowed project", func() (bool, string) {
		v, err = queryView(t, c, "team-c-web")
		if err != nil {
			return false, err.Error()
		}
		return len(v.Status.Resources) == 2 && len(invalidSpec(v.Status.Conditions)) == 0, fmt.Sprintf("%+v %+v", v.Status.Resources, v.Status.Conditions)
	})
	rows := map[string]app.ResourceStatus{}
	for _, r := range v.Status.Resources {
		rows[r.Kind] = r
	}
	require.Equal(t, app.SyncStatusUnknown, rows["Service"].Status, "a prohibited managed resource is Unknown, as in Argo CD: %+v", rows["Service"])
	require.Equal(t, app.HealthMissing, rows["Service"].Health)
	require.Contains(t, rows["Service"].Message, "namespaced kind Service is not allowed (namespaceResourceBlacklist)")
	require.Equal(t, app.SyncStatusSynced, rows["ConfigMap"].Status)
	require.Equal(t, app.SyncStatusOutOfSync, v.Status.Sync.Status, "as in Argo CD, the app is OutOfSync")
	_, err = cs.CoreV1().Services("team-c").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err, "the Service is still in the cluster")

	recordHistories(t, "team-c-web")
	recordWorkflowHistories(t, contract.ProjectWorkflowID("team-c"), "project-team-c")
	mustFerry(t, "app", "delete", "team-c-web")
}

func invalidSpec(conds []app.Condition) []app.Condition {
	var out []app.Condition
	for _, c := range conds {
		if c.Type == app.ConditionInvalidSpecError {
			out = append(out, c)
		}
	}
	return out
}
