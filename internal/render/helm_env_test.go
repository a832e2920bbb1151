package render

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestHelmBuildEnv follows Argo CD's repo-server (helmTemplate): the build
// environment is substituted into parameters' values and into the paths of
// value files and file parameters, $$ stays a literal $, an unknown
// variable is empty, and values are passed as written.
func TestHelmBuildEnv(t *testing.T) {
	root, path := t.TempDir(), "helm-chart"
	for _, dir := range []string{"helm-chart", "helm-common"} {
		if err := os.CopyFS(filepath.Join(root, dir), os.DirFS(filepath.Join("testdata", dir))); err != nil {
			t.Fatal(err)
		}
	}
	chart := filepath.Join(root, path)
	writeFile(t, filepath.Join(chart, "envs", "shop.yaml"), "replicaCount: 3\n")
	writeFile(t, filepath.Join(chart, "files", "main.txt"), "from main")
	writeFile(t, filepath.Join(chart, "main.yaml"), "service:\n  port: 9090\n")
	src := app.Source{RepoURL: "https://git.example.com/shop.git", Path: path, TargetRevision: "main", Helm: &app.HelmSource{
		ValueFiles: []string{"envs/$ARGOCD_APP_NAME.yaml", "$ARGOCD_APP_SOURCE_TARGET_REVISION.yaml"},
		Values:     "labels:\n  raw: $ARGOCD_APP_NAME\n",
		Parameters: []app.HelmParameter{
			{Name: "labels.app", Value: "$ARGOCD_APP_NAME"},
			{Name: "labels.ns", Value: "${ARGOCD_APP_NAMESPACE}"},
			{Name: "labels.rev", Value: "$ARGOCD_APP_REVISION_SHORT", ForceString: true},
			{Name: "labels.src", Value: "$ARGOCD_APP_SOURCE_PATH@$ARGOCD_APP_SOURCE_TARGET_REVISION"},
			{Name: "labels.literal", Value: "$$ARGOCD_APP_NAME"},
			{Name: "labels.kube", Value: "x$KUBE_VERSION"},
		},
		FileParameters: []app.HelmFileParameter{{Name: "labels.file", Path: "files/$ARGOCD_APP_SOURCE_TARGET_REVISION.txt"}},
	}}
	res, err := Render(context.Background(), root, src, Options{AppName: "shop", Namespace: "store", Revision: "0123456789abcdef0123456789abcdef01234567"})
	if err != nil {
		t.Fatal(err)
	}
	d := find(t, res.Objects, "Deployment/shop-shop")
	for field, want := range map[string]string{"app": "shop", "ns": "store", "rev": "0123456", "src": path + "@main",
		"literal": "$ARGOCD_APP_NAME", "kube": "x", "file": "from main", "raw": "$ARGOCD_APP_NAME"} {
		assertField(t, d, want, "metadata", "labels", field)
	}
	if got, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); got != 3 {
		t.Errorf("replicas = %d, want 3 from envs/shop.yaml", got)
	}
	ports, _, _ := unstructured.NestedSlice(find(t, res.Objects, "Service/shop-shop").Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(9090) {
		t.Errorf("service ports = %v, want port 9090 from main.yaml ($ARGOCD_APP_SOURCE_TARGET_REVISION.yaml)", ports)
	}
}

func TestHelmNamesBuildEnv(t *testing.T) {
	for _, tc := range []struct {
		h    *app.HelmSource
		want bool
	}{
		{nil, false},
		{&app.HelmSource{Values: "a: $ARGOCD_APP_NAME"}, false},
		{&app.HelmSource{ValueFiles: []string{"$values/envs/prod.yaml"}}, false},
		{&app.HelmSource{ValueFiles: []string{"$values/envs/$ARGOCD_APP_NAME.yaml"}}, true},
		{&app.HelmSource{ValueFiles: []string{"$ARGOCD_APP_NAME.yaml"}}, true},
		{&app.HelmSource{Parameters: []app.HelmParameter{{Name: "a", Value: "$ARGOCD_APP_REVISION"}}}, true},
		{&app.HelmSource{FileParameters: []app.HelmFileParameter{{Name: "a", Path: "${ARGOCD_APP_NAME}"}}}, true},
	} {
		if got := HelmNamesBuildEnv(tc.h); got != tc.want {
			t.Errorf("HelmNamesBuildEnv(%+v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
