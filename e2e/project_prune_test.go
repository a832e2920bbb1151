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

	"github.com/ferry-gitops/ferry/internal/app"
)

func teamPProject(repoURL string, kinds ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-p
spec:
  sourceRepos: [%s]
  destinations:
  - {name: us-east-1, namespace: team-p}
  namespaceResourceWhitelist:
`, repoURL)
	for _, k := range kinds {
		fmt.Fprintf(&b, "  - {group: \"\", kind: %s}\n", k)
	}
	return b.String()
}

// TestProjectRefusesPruneOfWhatItNoLongerAllows: the project allowed
// Secrets when the app applied one, then stopped; a commit that drops the
// Secret asks for it to be pruned, and the region worker refuses, naming
// the object and the rule, with the Secret left in place, as Argo CD
// refuses to sync a resource its project does not permit.
func TestProjectRefusesPruneOfWhatItNoLongerAllows(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "team-p")
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: not-a-real-one}\n"
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/secret.yaml": secret})
	repo.commitAndPush("a ConfigMap and a Secret")

	cs := kubeClient(t, "us-east-1")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-p"}}
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	require.NoError(t, err, "the platform team creates the namespace")
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), "team-p", metav1.DeleteOptions{}) })

	mustFerry(t, "project", "apply", "-f", writeFile(t, teamPProject(repo.URL, "ConfigMap", "Secret")))
	appFile := strings.Replace(projectAppYAML("team-p-web", repo.URL, "us-east-1", "team-p"), "project: team-a", "project: team-p", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appFile))
	mustFerry(t, "app", "sync", "team-p-web", "--wait")
	_, err = cs.CoreV1().Secrets("team-p").Get(context.Background(), "token", metav1.GetOptions{})
	require.NoError(t, err, "the Secret was applied while the project allowed it")

	mustFerry(t, "project", "apply", "-f", writeFile(t, teamPProject(repo.URL, "ConfigMap")))
	repo.git("rm", "-q", "app/secret.yaml")
	sha := repo.commitAndPush("no Secret")
	mustFerry(t, "app", "refresh", "team-p-web")
	out, err := ferry(t, "app", "sync", "team-p-web", "--revision", sha, "--prune", "--wait")
	require.Error(t, err, "the prune of the Secret is refused: %s", out)
	op := lastOp(t, "team-p-web")
	require.Equal(t, app.OperationFailed, op.Phase)
	for _, want := range []string{"prune refused", `project "team-p"`, "Secret team-p/token", "namespaceResourceWhitelist"} {
		require.Contains(t, op.Message, want)
	}
	eventually(t, 10*time.Second, "the Secret stays", func() (bool, string) {
		_, err := cs.CoreV1().Secrets("team-p").Get(context.Background(), "token", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}
