package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// helmBuildEnvApp is an app of the chart at helm-env whose parameters,
// value file and file parameter name Argo CD's build environment, as
// Argo CD's TestHelmSetEnv and TestHelmSetStringEnv do (--helm-set
// foo=$ARGOCD_APP_NAME). The release name and Helm namespace are fixed,
// so that only the build environment tells two apps' renders apart.
func helmBuildEnvApp(name, repoURL string) string {
	doc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  source:
    repoURL: %s
    targetRevision: main
    path: helm-env
    helm:
      releaseName: web
      namespace: shared
      valueFiles: [envs/$ARGOCD_APP_NAME.yaml]
      values: |
        raw: $ARGOCD_APP_NAME
      parameters:
        - {name: foo, value: $ARGOCD_APP_NAME}
        - {name: ns, value: $ARGOCD_APP_NAMESPACE}
        - {name: rev, value: $ARGOCD_APP_REVISION_SHORT, forceString: true}
        - {name: src, value: "${ARGOCD_APP_SOURCE_REPO_URL}#${ARGOCD_APP_SOURCE_PATH}@${ARGOCD_APP_SOURCE_TARGET_REVISION}"}
        - {name: literal, value: $$ARGOCD_APP_NAME}
      fileParameters:
        - {name: file, path: files/$ARGOCD_APP_SOURCE_TARGET_REVISION.txt}
  destinations:
`, name, repoURL)
	for _, r := range regions {
		doc += fmt.Sprintf("    - {name: %s, namespace: %s}\n", r, name)
	}
	return doc + "  syncPolicy:\n    automated: {prune: true}\n    syncOptions: [CreateNamespace=true]\n"
}

// TestHelmParametersSeeBuildEnv: as Argo CD's repo-server does, the build
// environment is substituted into Helm parameters (set and set-string),
// value file paths and file parameter paths, and values are passed as
// written. Two apps render the same chart with the same release: each
// sees its own name and namespace, so the cached render of one is never
// the other's.
func TestHelmParametersSeeBuildEnv(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "helm-env")
	repo.write(map[string]string{
		"helm-env/Chart.yaml":  "apiVersion: v2\nname: env\nversion: 0.1.0\n",
		"helm-env/values.yaml": "foo: unset\nfromFile: none\n",
		"helm-env/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-env
data:
  foo: {{ .Values.foo | quote }}
  ns: {{ .Values.ns | quote }}
  rev: {{ .Values.rev | quote }}
  src: {{ .Values.src | quote }}
  literal: {{ .Values.literal | quote }}
  raw: {{ .Values.raw | quote }}
  file: {{ .Values.file | quote }}
  fromFile: {{ .Values.fromFile | quote }}
`,
		"helm-env/envs/hv-one.yaml": "fromFile: one\n",
		"helm-env/envs/hv-two.yaml": "fromFile: two\n",
		"helm-env/files/main.txt":   "main's file",
	})
	sha := repo.commitAndPush("a chart whose app names the build environment")
	for _, name := range []string{"hv-one", "hv-two"} {
		mustFerry(t, "app", "apply", "-f", writeFile(t, helmBuildEnvApp(name, repo.URL)))
	}
	for _, name := range []string{"hv-one", "hv-two"} {
		waitApp(t, name, sha, 3*time.Minute)
		want := map[string]string{
			"foo": name, "ns": name, "rev": sha[:7], "src": repo.URL + "#helm-env@main", "literal": "$ARGOCD_APP_NAME",
			"raw": "$ARGOCD_APP_NAME", "file": "main's file", "fromFile": name[len("hv-"):],
		}
		for _, r := range regions {
			cm, err := kubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), "web-env", metav1.GetOptions{})
			require.NoError(t, err, "app %s, region %s: the chart's ConfigMap", name, r)
			require.Equal(t, want, cm.Data, "app %s, region %s: the build environment in parameters, value files and file parameters", name, r)
		}
	}
	for _, name := range []string{"hv-one", "hv-two"} {
		mustFerry(t, "app", "delete", name, "--cascade")
	}
}
