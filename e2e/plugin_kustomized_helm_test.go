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

// kustomizedHelmPlugin is the plugin of Argo CD's plugins/kustomized-helm
// example, its init and generate as the example's README gives them.
const kustomizedHelmPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: kustomized-helm
spec:
  init:
    command: ["/bin/sh", "-c"]
    args: ["helm dependency build"]
  generate:
    command: ["/bin/sh", "-c"]
    args: ["helm template . --name-template $ARGOCD_APP_NAME --namespace $ARGOCD_APP_NAMESPACE --kube-version $KUBE_VERSION > all.yaml && kustomize build"]
`

// TestPluginKustomizedHelmExample runs Argo CD's kustomized-helm example
// with the helm and kustomize CLIs of the tools cache, linked into the
// plugin directory's bin/ and so visible in the sandbox. init (helm
// dependency build) writes the subchart into the plugin's copy of the
// repository. The example's kustomization lists its patch in the string
// form kustomize v5 refuses: that commit ends as a render error naming the
// plugin and kustomize's reason; with the patch written as kustomize v5
// reads it, the app syncs: helm's output, patched by kustomize. The
// example's patch targets the Deployment of release "release-name", so the
// app has that name.
func TestPluginKustomizedHelmExample(t *testing.T) {
	tools := os.Getenv("FERRY_TOOLS_BIN")
	require.NotEmpty(t, tools, "FERRY_TOOLS_BIN: the tools cache holding helm and kustomize (hack/tools.sh)")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomized-helm.yaml"), []byte(kustomizedHelmPlugin), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	for _, tool := range []string{"helm", "kustomize"} {
		require.FileExists(t, filepath.Join(tools, tool), "hack/tools.sh builds %s", tool)
		require.NoError(t, os.Symlink(filepath.Join(tools, tool), filepath.Join(dir, "bin", tool)))
	}
	startWorker(t, "--plugin-dir", dir)

	repo := newRepo(t, "kustomized-helm")
	repo.copyDir(filepath.Join(corpus, "helm-guestbook"), "helm-guestbook")
	repo.copyDir(filepath.Join(corpus, "plugins", "kustomized-helm"), "plugins/kustomized-helm")
	repo.commitAndPush("Argo CD's kustomized-helm example")
	const name = "release-name"
	appDoc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  source:
    repoURL: %s
    targetRevision: main
    path: plugins/kustomized-helm
    plugin:
      name: kustomized-helm
  destinations:
`, name, repo.URL)
	for _, r := range regions {
		appDoc += fmt.Sprintf("    - {name: %s, namespace: kh}\n", r)
	}
	appDoc += "  syncPolicy:\n    automated: {prune: true}\n    syncOptions: [CreateNamespace=true]\n"
	mustFerry(t, "app", "apply", "-f", writeFile(t, appDoc))

	c := temporalClient(t)
	eventually(t, 3*time.Minute, "the example's string-form patches fail in kustomize v5, named in the app's status", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			if cond.Type == "ComparisonError" && strings.Contains(cond.Message, "plugin kustomized-helm: generate") &&
				strings.Contains(cond.Message, "invalid Kustomization") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", v.Status.Conditions)
	})

	repo.write(map[string]string{"plugins/kustomized-helm/kustomization.yaml": "namePrefix: kustomize-\n\nresources:\n- ./all.yaml\n\npatches:\n- path: overlays/guestbook-deployment.yaml\n"})
	sha := repo.commitAndPush("the patch as kustomize v5 reads it")
	mustFerry(t, "app", "refresh", name)
	waitApp(t, name, sha, 3*time.Minute)
	for _, r := range regions {
		cs := kubeClient(t, r)
		d, err := cs.AppsV1().Deployments("kh").Get(context.Background(), "kustomize-release-name-helm-guestbook", metav1.GetOptions{})
		require.NoError(t, err, "region %s: helm's Deployment with kustomize's name prefix", r)
		require.Equal(t, "gcr.io/google-samples/gb-frontend:v5", d.Spec.Template.Spec.Containers[0].Image, "region %s: kustomize's patch", r)
		_, err = cs.CoreV1().Services("kh").Get(context.Background(), "kustomize-release-name-helm-guestbook", metav1.GetOptions{})
		require.NoError(t, err, "region %s: the subchart's Service", r)
	}
	mustFerry(t, "app", "delete", name, "--cascade")
}
