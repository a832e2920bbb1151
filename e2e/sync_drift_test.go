package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// driftAppYAML is an automated app (prune, selfHeal as given) whose poll
// is far away: whatever happens within a test's minutes comes from a signal.
func driftAppYAML(name, repoURL, path, namespace string, selfHeal bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n", name)
	fmt.Fprintf(&b, "  pollInterval: 30m\n  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n  destinations:\n", repoURL, path)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, namespace)
	}
	fmt.Fprintf(&b, "  syncPolicy:\n    automated: {prune: true, selfHeal: %t}\n    syncOptions: [CreateNamespace=true]\n", selfHeal)
	return b.String()
}

// kubectl runs the stack's kubectl against a region.
func kubectl(t *testing.T, region string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(stack.ToolsBin, "kubectl"), append([]string{"--kubeconfig", stack.Kubeconfig, "--context", region}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
	return string(out)
}

func replicas(t *testing.T, region, namespace string) int32 {
	d, err := kubeClient(t, region).AppsV1().Deployments(namespace).Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err)
	return *d.Spec.Replicas
}

const driftSecret = `apiVersion: v1
kind: Secret
metadata:
  name: guestbook-creds
stringData:
  password: hunter2
`

// TestSelfHealDrift: `kubectl scale` of a managed Deployment is reverted in
// seconds when the app has selfHeal; without selfHeal the app turns
// OutOfSync as fast, keeps the scale, and `ferry app diff` shows the
// difference (a Secret edited by hand too, its values masked). Apps poll
// every 30 minutes: only the region worker's drift signal can do this.
func TestSelfHealDrift(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "drift")
	repo.copyDir(filepath.Join(corpus, "guestbook"), "guestbook")
	repo.write(map[string]string{"guestbook/secret.yaml": driftSecret})
	sha := repo.commitAndPush("guestbook with a Secret")
	mustFerry(t, "app", "apply", "-f", writeFile(t, driftAppYAML("drift-heal", repo.URL, "guestbook", "drift-heal", true)))
	mustFerry(t, "app", "apply", "-f", writeFile(t, driftAppYAML("drift-watch", repo.URL, "guestbook", "drift-watch", false)))
	waitApp(t, "drift-heal", sha, 3*time.Minute)
	waitApp(t, "drift-watch", sha, 3*time.Minute)
	region := regions[0]

	out, err := ferry(t, "app", "diff", "drift-watch")
	require.NoError(t, err, "in sync: exit 0: %s", out)
	assert.Contains(t, out, "no differences")

	began := time.Now()
	kubectl(t, region, "-n", "drift-heal", "scale", "deployment/guestbook-ui", "--replicas=3")
	kubectl(t, region, "-n", "drift-watch", "scale", "deployment/guestbook-ui", "--replicas=3")
	kubectl(t, region, "-n", "drift-watch", "patch", "secret/guestbook-creds", "--type=merge", "-p", `{"stringData":{"password":"swordfish"}}`)

	eventually(t, 30*time.Second, "the scale reverted by selfHeal", func() (bool, string) {
		n := replicas(t, region, "drift-heal")
		return n == 1, fmt.Sprintf("%d replicas", n)
	})
	t.Logf("selfHeal reverted kubectl scale in %s", time.Since(began).Round(10*time.Millisecond))

	// The two edits are two drift signals: the compare that the first one
	// starts may see only the Deployment's, and the next one both.
	c := temporalClient(t)
	want := map[string]string{"Deployment": "differs at spec.replicas", "Secret": "differs at data.password"}
	eventually(t, 30*time.Second, "drift-watch OutOfSync in "+region+" at both edits", func() (bool, string) {
		v, err := queryView(t, c, "drift-watch")
		if err != nil {
			return false, err.Error()
		}
		outOfSync := map[string]string{}
		for _, r := range v.Status.Resources {
			if r.Region == region && r.Status == app.SyncStatusOutOfSync {
				outOfSync[r.Kind] = r.Message
			}
		}
		sum := v.Status.Regions[region]
		return sum.Sync == app.SyncStatusOutOfSync && assert.ObjectsAreEqual(want, outOfSync), fmt.Sprintf("%+v, out of sync: %v", sum, outOfSync)
	})
	t.Logf("drift-watch OutOfSync after %s", time.Since(began).Round(10*time.Millisecond))
	assert.Equal(t, int32(3), replicas(t, region, "drift-watch"), "without selfHeal the scale stays")

	cmd := exec.Command(bin(t, "ferry"), "app", "diff", "drift-watch")
	cmd.Env = append(env(), "REDIS_ADDR="+stack.RedisAddr)
	diffOut, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", diffOut)
	assert.Equal(t, 1, exit.ExitCode(), "differences: exit 1")
	text := string(diffOut)
	assert.Contains(t, text, "===== "+region+": apps/Deployment drift-watch/guestbook-ui: differs at spec.replicas")
	assert.Contains(t, text, "-  replicas: 3\n+  replicas: 1\n")
	assert.Contains(t, text, "===== "+region+": Secret drift-watch/guestbook-creds: differs at data.password")
	assert.Contains(t, text, "-  password: ++++++++\n+  password: +++++++++\n")
	for _, secret := range []string{"hunter2", "swordfish", "aHVudGVyMg", "c3dvcmRmaXNo"} {
		assert.NotContains(t, text, secret)
	}
	assert.NotContains(t, text, "===== "+regions[1]+": ", "the other region is in sync")

	for _, name := range []string{"drift-heal", "drift-watch"} {
		mustFerry(t, "app", "delete", name, "--cascade")
	}
}

// TestSyncWavesCorpus: Argo CD's sync-waves example syncs to every region;
// its ordinary objects go in wave order (backend in wave 0, frontend in
// wave 2), which the API server's resourceVersions show. Its Jobs are hooks:
// the Sync phase neither applies nor compares them.
func TestSyncWavesCorpus(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "sync-waves")
	repo.copyDir(filepath.Join(corpus, "sync-waves"), "sync-waves")
	sha := repo.commitAndPush("sync-waves")
	mustFerry(t, "app", "apply", "-f", writeFile(t, driftAppYAML("sync-waves", repo.URL, "sync-waves", "sync-waves", true)))
	st := waitApp(t, "sync-waves", sha, 3*time.Minute)
	kinds := map[string]int{}
	for _, r := range st.Resources {
		kinds[r.Kind]++
	}
	assert.Equal(t, map[string]int{"ReplicaSet": 2 * len(regions), "Service": 2 * len(regions)}, kinds, "hooks are not the Sync phase's resources")
	for _, r := range regions {
		cs := kubeClient(t, r)
		backend, err := cs.CoreV1().Services("sync-waves").Get(context.Background(), "backend", metav1.GetOptions{})
		require.NoError(t, err)
		frontend, err := cs.CoreV1().Services("sync-waves").Get(context.Background(), "frontend", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Less(t, rvOf(backend.ResourceVersion), rvOf(frontend.ResourceVersion), "region %s: wave 0 before wave 2", r)
	}
	mustFerry(t, "app", "delete", "sync-waves", "--cascade")
}

func rvOf(s string) uint64 {
	var n uint64
	fmt.Sscan(s, &n)
	return n
}
