package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// kidsProject is a project that allows the repo in namespace kids* of every
// region; children lists the projects its apps may create children in
// (ferry.dev/child-projects), none when empty.
func kidsProject(name, repoURL, children string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: %s\n  namespace: argocd\n", name)
	if children != "" {
		fmt.Fprintf(&b, "  annotations:\n    ferry.dev/child-projects: %q\n", children)
	}
	fmt.Fprintf(&b, "spec:\n  sourceRepos: [%s]\n  destinations:\n  - {name: '*', namespace: 'kids*'}\n", repoURL)
	b.WriteString("  clusterResourceWhitelist: [{group: '', kind: Namespace}]\n")
	return b.String()
}

// kidsApp is childApp of project in namespace name, from path name.
func kidsApp(name, project, repoURL string) string {
	return strings.Replace(childApp(name, repoURL), "project: default", "project: "+project, 1)
}

// TestChildAppStaysInItsParentsProject: an app of apps of project kids-a
// whose Git holds a child of project kids-platform, which would admit the
// child itself, does not start that child: the parent's sync fails and its
// row of the child names both projects and the rule, while its child of
// kids-a runs. Once kids-a lets its apps create children in kids-platform
// (ferry.dev/child-projects), the child starts.
func TestChildAppStaysInItsParentsProject(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "kids")
	repo.write(map[string]string{
		"kids/kids-web.yaml": kidsApp("kids-web", "kids-a", repo.URL),
		"kids/kids-ops.yaml": kidsApp("kids-ops", "kids-platform", repo.URL),
		"kids-web/cm.yaml":   configMap("web", "v1"),
		"kids-ops/cm.yaml":   configMap("ops", "v1"),
	})
	sha := repo.commitAndPush("two children")
	mustFerry(t, "project", "apply", "-f", writeFile(t, kidsProject("kids-a", repo.URL, "")))
	mustFerry(t, "project", "apply", "-f", writeFile(t, kidsProject("kids-platform", repo.URL, "")))
	mustFerry(t, "app", "apply", "-f", writeFile(t, kidsApp("kids", "kids-a", repo.URL)))

	waitApp(t, "kids-web", sha, 2*time.Minute)
	c := temporalClient(t)
	want := `child app "kids-ops" is in project "kids-platform", but its parent app of apps "kids" is in project "kids-a", which does not allow children in "kids-platform"`
	eventually(t, 2*time.Minute, "the parent refuses kids-ops, naming both projects", func() (bool, string) {
		v, err := queryView(t, c, "kids")
		if err != nil {
			return false, err.Error()
		}
		op := v.Status.OperationState
		if op == nil || op.Phase != app.OperationFailed || !strings.Contains(op.Message, want) {
			return false, fmt.Sprintf("operation %+v", op)
		}
		row := childRow(&v.Status, "kids-ops")
		if row == nil || row.Health != app.HealthDegraded || !strings.Contains(row.Message, want) || !strings.Contains(row.Message, "ferry.dev/child-projects") {
			return false, fmt.Sprintf("row of kids-ops: %+v", row)
		}
		return v.Status.Health.Status == app.HealthDegraded, "health " + string(v.Status.Health.Status)
	})
	_, err := queryView(t, c, "kids-ops")
	require.Error(t, err, "kids-ops must not have started")
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().Namespaces().Get(context.Background(), "kids-ops", metav1.GetOptions{})
		require.Error(t, err, "nothing of kids-ops in %s", r)
	}
	out, err := ferry(t, "app", "get", "kids")
	require.NoError(t, err, out)
	require.Contains(t, out, "kids-ops")

	// kids-a now lets its apps create children in kids-platform.
	mustFerry(t, "project", "apply", "-f", writeFile(t, kidsProject("kids-a", repo.URL, "kids-platform")))
	mustFerry(t, "app", "refresh", "kids")
	mustFerry(t, "app", "sync", "kids")
	waitApp(t, "kids-ops", sha, 2*time.Minute)
	waitApp(t, "kids", sha, time.Minute)

	mustFerry(t, "app", "delete", "kids")
	appGone(t, c, "kids-ops")
	appGone(t, c, "kids-web")
	mustFerry(t, "project", "delete", "kids-a")
	mustFerry(t, "project", "delete", "kids-platform")
}

// TestAppSetStaysInItsProject: an ApplicationSet whose template is of
// project kids-s runs under kids-s; a Git file of its git-files generator
// feeds a templatePatch that rewrites project and destination. The app of
// that file is never created, and the set names it with both projects;
// the other file's app runs.
func TestAppSetStaysInItsProject(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "kids-set")
	repo.write(map[string]string{
		"config/good/config.json": `{"name": "good"}`,
		"config/evil/config.json": `{"name": "evil", "project": "kids-open", "namespace": "kube-system"}`,
		"app/cm.yaml":             configMap("set", "v1"),
	})
	sha := repo.commitAndPush("two config files")
	mustFerry(t, "project", "apply", "-f", writeFile(t, kidsProject("kids-s", repo.URL, "")))
	// kids-open admits anything: the patch aims at it.
	mustFerry(t, "project", "apply", "-f", writeFile(t, `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: kids-open, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{name: '*', namespace: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
`))
	var b strings.Builder
	b.WriteString("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: kids-set\n  namespace: argocd\nspec:\n")
	fmt.Fprintf(&b, "  goTemplate: true\n  generators:\n  - git:\n      repoURL: %s\n      revision: main\n      files:\n      - path: config/*/config.json\n", repo.URL)
	b.WriteString("  template:\n    metadata:\n      name: 'set-{{.name}}'\n    spec:\n      project: kids-s\n")
	fmt.Fprintf(&b, "      source: {repoURL: %s, targetRevision: main, path: app}\n      destinations:\n", repo.URL)
	for _, r := range regions {
		fmt.Fprintf(&b, "      - {name: %s, namespace: 'kids-{{.name}}'}\n", r)
	}
	b.WriteString("      syncPolicy:\n        automated: {prune: true}\n        syncOptions: [CreateNamespace=true]\n")
	b.WriteString("  templatePatch: |\n    {{- if .project }}\n    spec:\n      project: '{{ .project }}'\n      destinations:\n")
	for _, r := range regions {
		fmt.Fprintf(&b, "      - {name: %s, namespace: '{{ .namespace }}'}\n", r)
	}
	b.WriteString("    {{- end }}\n")
	mustFerry(t, "appset", "apply", "-f", writeFile(t, b.String()))

	waitApp(t, "set-good", sha, 3*time.Minute)
	c := temporalClient(t)
	want := `child app "set-evil" is in project "kids-open", but its parent applicationset "kids-set" is in project "kids-s"`
	eventually(t, time.Minute, "the set refuses set-evil, naming both projects", func() (bool, string) {
		v, err := queryAppSet(t, c, "kids-set")
		if err != nil {
			return false, err.Error()
		}
		cond := condition(v, "ErrorOccurred")
		return cond.Status == "True" && strings.Contains(cond.Message, want), fmt.Sprintf("%+v", cond)
	})
	_, err := queryView(t, c, "set-evil")
	require.Error(t, err, "set-evil must not have started")
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("kube-system").Get(context.Background(), "set", metav1.GetOptions{})
		require.Error(t, err, "nothing of set-evil in kube-system of %s", r)
	}

	mustFerry(t, "appset", "delete", "kids-set")
	appGone(t, c, "set-good")
	mustFerry(t, "project", "delete", "kids-s")
	mustFerry(t, "project", "delete", "kids-open")
}
