package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// argocdCMExcludeSecrets is an argocd-cm whose resource.exclusions leave
// core Secrets alone in every cluster.
const argocdCMExcludeSecrets = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.exclusions: |
    - apiGroups: [""]
      kinds: [Secret]
      clusters: ["*"]
`

func orphansProject(repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-o}
spec:
  sourceRepos: [%s]
  destinations:
  - {name: us-east-1, namespace: orphans}
  namespaceResourceBlacklist:
  - {group: "", kind: ResourceQuota}
  orphanedResources:
    ignore:
    - {kind: ConfigMap, name: "ignored-*"}
`, repoURL)
}

// orphanRows are the KIND/NAME of the rows of ferry app resources marked
// orphaned (Yes) or not (No).
func orphanRows(out, mark string) []string {
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[len(f)-1] == mark && f[0] != "REGION" {
			rows = append(rows, f[len(f)-4]+"/"+f[len(f)-2])
		}
	}
	slices.Sort(rows)
	return rows
}

// TestAppResourcesOrphaned: project team-o monitors orphaned resources.
// In the app's namespace live its own objects, another app's, and objects
// made by hand; ferry app resources --orphaned, through the kubeconfig,
// lists exactly those made by hand that the project does not ignore, with
// Argo CD's OrphanedResourceWarning. The worker's argocd-cm excludes
// Secrets: the app's Secret in Git is neither applied nor listed, and with
// the same file a stray Secret is no orphan either.
func TestAppResourcesOrphaned(t *testing.T) {
	cm := writeFile(t, argocdCMExcludeSecrets)
	startWorker(t, "--resource-customizations", cm)
	ctx := context.Background()
	cs := kubeClient(t, "us-east-1")
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "orphans"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), "orphans", metav1.DeleteOptions{}) })

	repo := newRepo(t, "orphans")
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: not-a-real-one}\n"
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/secret.yaml": secret, "other/cm.yaml": configMap("other", "v1")})
	sha := repo.commitAndPush("an app and another in one namespace")
	mustFerry(t, "project", "apply", "-f", writeFile(t, orphansProject(repo.URL)))
	web := strings.Replace(projectAppYAML("orphans-web", repo.URL, "us-east-1", "orphans"), "project: team-a", "project: team-o", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, web))
	other := strings.Replace(projectAppYAML("orphans-other", repo.URL, "us-east-1", "orphans"), "project: team-a", "project: default", 1)
	other = strings.Replace(other, "path: app", "path: other", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, other))
	mustFerry(t, "app", "sync", "orphans-web", "--wait")
	mustFerry(t, "app", "sync", "orphans-other", "--wait")
	v, err := queryView(t, temporalClient(t), "orphans-web")
	require.NoError(t, err)
	require.Equal(t, sha, v.Status.Sync.Revision)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status, "the excluded Secret does not make the app OutOfSync")
	require.Len(t, v.Status.Resources, 1, "an excluded kind is not compared: %+v", v.Status.Resources)
	require.Equal(t, "settings", v.Status.Resources[0].Name)
	_, err = cs.CoreV1().Secrets("orphans").Get(ctx, "token", metav1.GetOptions{})
	require.Error(t, err, "an excluded kind is not applied")
	_, err = cs.CoreV1().ConfigMaps("orphans").Get(ctx, "settings", metav1.GetOptions{})
	require.NoError(t, err, "what is not excluded is applied")

	byHand := func(name string, annotations map[string]string) {
		_, err := cs.CoreV1().ConfigMaps("orphans").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: name, Annotations: annotations}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	byHand("stray", nil)
	byHand("ignored-cache", nil)
	byHand("forged", map[string]string{"ferry.dev/tracking-id": "gone:/ConfigMap:orphans/forged"})
	_, err = cs.CoreV1().Secrets("orphans").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "leftover"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().ResourceQuotas("orphans").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}, metav1.CreateOptions{})
	require.NoError(t, err)

	out := mustFerry(t, "app", "resources", "orphans-web", "--orphaned", "--resource-customizations", cm)
	require.Equal(t, []string{"ConfigMap/forged", "ConfigMap/stray"}, orphanRows(out, "Yes"), out)
	require.Empty(t, orphanRows(out, "No"), "--orphaned lists only orphans: %s", out)
	require.Contains(t, out, "OrphanedResourceWarning: Application has 2 orphaned resources (region us-east-1, namespace orphans)")

	out = mustFerry(t, "app", "resources", "orphans-web")
	require.Equal(t, []string{"ConfigMap/forged", "ConfigMap/stray", "Secret/leftover"}, orphanRows(out, "Yes"),
		"without the argocd-cm, Secrets are not excluded: %s", out)
	require.Equal(t, []string{"ConfigMap/settings"}, orphanRows(out, "No"), out)

	out, err = ferry(t, "app", "resources", "orphans-other", "--orphaned")
	require.Error(t, err, out)
	require.Contains(t, out, `project "default" does not monitor orphaned resources`)
	mustFerry(t, "app", "delete", "orphans-web")
	mustFerry(t, "app", "delete", "orphans-other")
}
