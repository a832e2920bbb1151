package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

// dirsAppSet is a git directories generator over apps/* of the repo, less
// apps/skip: one automated app per directory, named prefix-<dir>, in every
// region.
func dirsAppSet(name, repoURL, prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: %s\n  namespace: argocd\nspec:\n", name)
	b.WriteString("  goTemplate: true\n  goTemplateOptions: [\"missingkey=error\"]\n  generators:\n")
	fmt.Fprintf(&b, "  - git:\n      repoURL: %s\n      revision: main\n      directories:\n      - path: apps/*\n      - path: apps/skip\n        exclude: true\n", repoURL)
	fmt.Fprintf(&b, "  template:\n    metadata:\n      name: '%s-{{.path.basename}}'\n    spec:\n      project: default\n", prefix)
	fmt.Fprintf(&b, "      source:\n        repoURL: %s\n        targetRevision: main\n        path: '{{.path.path}}'\n      destinations:\n", repoURL)
	for _, r := range regions {
		fmt.Fprintf(&b, "      - {name: %s, namespace: '%s-{{.path.basename}}'}\n", r, prefix)
	}
	b.WriteString("      syncPolicy:\n        automated: {prune: true, selfHeal: true}\n        syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

func queryAppSet(t *testing.T, c client.Client, name string) (*contract.AppSetView, error) {
	t.Helper()
	return ferryclient.GetAppSet(context.Background(), c, name)
}

func condition(v *contract.AppSetView, typ string) contract.AppSetCondition {
	for _, c := range v.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return contract.AppSetCondition{}
}

func setApps(v *contract.AppSetView) []string {
	var names []string
	for _, r := range v.Status.Resources {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return names
}

// appGone waits until the app's workflow has completed (deleted).
func appGone(t *testing.T, c client.Client, name string) {
	t.Helper()
	eventually(t, 2*time.Minute, "app "+name+" deleted", func() (bool, string) {
		d, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
		if err != nil {
			return false, err.Error()
		}
		s := d.WorkflowExecutionInfo.GetStatus()
		return s == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, s.String()
	})
}

// TestAppSetGitDirectories: a git directories generator over three app
// directories creates three apps, each Synced; a fourth directory pushed
// and announced by the webhook creates the fourth; removing one deletes its
// app and its resources; a directory naming a user's app is refused with a
// condition, and the user's app is untouched; deleting the set deletes its
// apps.
func TestAppSetGitDirectories(t *testing.T) {
	hookAddr := freeAddr(t)
	startWorkerEnv(t, []string{"FERRY_WEBHOOK_GITHUB_SECRET=" + webhookSecret}, "--webhook-addr", hookAddr)
	repo := newRepo(t, "appset-dirs")
	files := map[string]string{"apps/skip/cm.yaml": configMap("skip", "v1"), "user/cm.yaml": configMap("mine", "v1")}
	for _, d := range []string{"a", "b", "c"} {
		files["apps/"+d+"/cm.yaml"] = configMap("cm-"+d, "v1")
	}
	repo.write(files)
	sha1 := repo.commitAndPush("three apps")
	// A user's app whose name the set will generate once apps/e exists.
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("dirs-e", repo.URL, "user", "dirs-user", true, "3m")))
	out := mustFerry(t, "appset", "apply", "-f", writeFile(t, dirsAppSet("dirs", repo.URL, "dirs")))
	require.Contains(t, out, `applicationset "dirs" applied`)
	for _, d := range []string{"a", "b", "c"} {
		waitApp(t, "dirs-"+d, sha1, 3*time.Minute)
	}
	waitApp(t, "dirs-e", sha1, time.Minute)
	c := temporalClient(t)
	eventually(t, time.Minute, "the set reports its three apps Synced and Healthy", func() (bool, string) {
		v, err := queryAppSet(t, c, "dirs")
		if err != nil {
			return false, err.Error()
		}
		ok := slices.Equal(setApps(v), []string{"dirs-a", "dirs-b", "dirs-c"}) && condition(v, contract.AppSetResourcesUpToDate).Status == "True"
		for _, r := range v.Status.Resources {
			ok = ok && r.Status == "Synced" && r.Health != nil && r.Health.Status == "Healthy"
		}
		return ok, fmt.Sprintf("%+v", v.Status)
	})
	v, err := queryView(t, c, "dirs-a")
	require.NoError(t, err)
	require.Equal(t, &contract.Owner{AppSet: "dirs"}, v.Owner)
	_, err = c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID("dirs-skip"), "")
	require.Error(t, err, "the excluded directory generates no app")
	require.Contains(t, mustFerry(t, "appset", "get", "dirs"), "dirs-b")
	require.Contains(t, mustFerry(t, "appset", "list"), "dirs")
	require.Contains(t, mustFerry(t, "app", "get", "dirs-a"), `Owner:         applicationset "dirs"`)

	// A fourth directory, and apps/e naming the user's app: pushed, then
	// announced by the webhook.
	h := &hook{t: t, url: "http://" + hookAddr + webhook.Path, repo: repo}
	repo.write(map[string]string{"apps/d/cm.yaml": configMap("cm-d", "v1"), "apps/e/cm.yaml": configMap("cm-e", "evil")})
	sha2 := repo.commitAndPush("a fourth app, and one clashing with a user's")
	eventually(t, 30*time.Second, "webhook up", func() (bool, string) {
		code := h.post("POST", webhookSecret, h.githubPush(sha1, sha2, "apps/d/cm.yaml", "apps/e/cm.yaml"))
		return code == http.StatusAccepted, fmt.Sprint(code)
	})
	waitApp(t, "dirs-d", sha2, 2*time.Minute)
	eventually(t, time.Minute, "the clash is a condition of the set", func() (bool, string) {
		v, err := queryAppSet(t, c, "dirs")
		if err != nil {
			return false, err.Error()
		}
		cond := condition(v, contract.AppSetResourcesUpToDate)
		return cond.Status == "False" && strings.Contains(cond.Message,
			`app "dirs-e" is owned by a user (ferry app apply): applicationset "dirs" cannot change or delete it`), fmt.Sprintf("%+v", v.Status.Conditions)
	})
	v, err = queryView(t, c, "dirs-e")
	require.NoError(t, err)
	require.Equal(t, "user", v.Spec.Source.Path, "the user's app keeps its spec")
	require.Equal(t, &contract.Owner{}, v.Owner)

	// apps/b removed: its app and its ConfigMaps go.
	repo.git("rm", "-q", "-r", "apps/b", "apps/e")
	sha3 := repo.commitAndPush("drop b")
	require.Equal(t, http.StatusAccepted, h.post("POST", webhookSecret, h.githubPush(sha2, sha3, "apps/b/cm.yaml")))
	appGone(t, c, "dirs-b")
	for _, r := range regions {
		eventually(t, time.Minute, "cm-b deleted in "+r, func() (bool, string) {
			_, err := kubeClient(t, r).CoreV1().ConfigMaps("dirs-b").Get(context.Background(), "cm-b", metav1.GetOptions{})
			return err != nil, fmt.Sprint(err)
		})
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("dirs-a").Get(context.Background(), "cm-a", metav1.GetOptions{})
		require.NoError(t, err, "dirs-a untouched in %s", r)
	}
	eventually(t, time.Minute, "the set is up to date with a, c and d", func() (bool, string) {
		v, err := queryAppSet(t, c, "dirs")
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(setApps(v), []string{"dirs-a", "dirs-c", "dirs-d"}) &&
			condition(v, contract.AppSetResourcesUpToDate).Status == "True", fmt.Sprintf("%+v", v.Status)
	})

	// The set deleted: its apps and their resources go; the user's stays.
	require.Contains(t, mustFerry(t, "appset", "delete", "dirs"), `applicationset "dirs" deleted`)
	for _, d := range []string{"a", "c", "d"} {
		appGone(t, c, "dirs-"+d)
	}
	_, err = kubeClient(t, regions[0]).CoreV1().ConfigMaps("dirs-a").Get(context.Background(), "cm-a", metav1.GetOptions{})
	require.Error(t, err, "cascaded to the resources")
	_, err = queryView(t, c, "dirs-e")
	require.NoError(t, err, "the user's app stays")
	mustFerry(t, "app", "delete", "dirs-e", "--cascade")
	out, err = ferry(t, "appset", "get", "dirs")
	require.Error(t, err)
	require.Contains(t, out, `applicationset "dirs" not found`)
	recordWorkflowHistories(t, contract.AppSetWorkflowID("dirs"), "appset-dirs")
}

// listAppSet is a list generator of n elements, each an app with one
// ConfigMap of the given version, under the policy.
func listAppSet(name, repoURL, policy, version string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: %s\nspec:\n  generators:\n  - list:\n      elements:\n", name)
	for i := range n {
		fmt.Fprintf(&b, "      - {app: '%s-%d'}\n", name, i)
	}
	fmt.Fprintf(&b, "  template:\n    metadata:\n      name: '{{app}}'\n      annotations: {version: %s}\n    spec:\n", version)
	fmt.Fprintf(&b, "      source: {repoURL: %s, targetRevision: main, path: app}\n      destinations:\n", repoURL)
	for _, r := range regions {
		fmt.Fprintf(&b, "      - {name: %s, namespace: '{{app}}'}\n", r)
	}
	b.WriteString("      syncPolicy:\n        automated: {prune: true}\n        syncOptions: [CreateNamespace=true]\n")
	if policy != "" {
		fmt.Fprintf(&b, "  syncPolicy:\n    applicationsSync: %s\n", policy)
	}
	return b.String()
}

// TestAppSetWorkerKilledWhileCreating: kill -9 of the control worker while
// the set creates its apps; after a new worker takes over, every app exists
// exactly once, owned by the set, and the set reports them all.
func TestAppSetWorkerKilledWhileCreating(t *testing.T) {
	w := startWorker(t)
	repo := newRepo(t, "appset-crash")
	repo.write(map[string]string{"app/cm.yaml": configMap("cm", "v1")})
	sha := repo.commitAndPush("one app")
	const n = 12
	mustFerry(t, "appset", "apply", "-f", writeFile(t, listAppSet("crash", repo.URL, "", "v1", n)))
	c := temporalClient(t)
	eventually(t, 2*time.Minute, "the set has begun creating its apps", func() (bool, string) {
		created := 0
		for i := range n {
			if _, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(fmt.Sprintf("crash-%d", i)), ""); err == nil {
				created++
			}
		}
		return created > 0, fmt.Sprint(created, " created")
	})
	w.kill9()
	startWorker(t)
	for i := range n {
		waitApp(t, fmt.Sprintf("crash-%d", i), sha, 3*time.Minute)
	}
	eventually(t, time.Minute, "the set reports every app", func() (bool, string) {
		v, err := queryAppSet(t, c, "crash")
		if err != nil {
			return false, err.Error()
		}
		return len(v.Status.Resources) == n && condition(v, contract.AppSetResourcesUpToDate).Status == "True", fmt.Sprintf("%+v", v.Status)
	})
	// The kill landed while the apps were being created: the first
	// reconcile finished on a later attempt, on the new worker.
	it := c.GetWorkflowHistory(context.Background(), contract.AppSetWorkflowID("crash"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	attempt := int32(0)
	for it.HasNext() && attempt == 0 {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == contract.ActivityReconcileAppSet {
			attempt = a.GetAttempt()
		}
	}
	require.GreaterOrEqual(t, attempt, int32(2), "the first reconcile was cut short by the kill and retried")
	for i := range n {
		name := fmt.Sprintf("crash-%d", i)
		require.Equal(t, 1, e2etest.Starts(t, c, contract.WorkflowID(name)), "app %s was started once", name)
		v, err := queryView(t, c, name)
		require.NoError(t, err)
		require.Equal(t, &contract.Owner{AppSet: "crash"}, v.Owner)
	}
	mustFerry(t, "appset", "delete", "crash")
	for i := range n {
		appGone(t, c, fmt.Sprintf("crash-%d", i))
	}
}

// TestAppSetApplicationsSyncPolicies: with create-only a template change
// leaves the existing apps as they are; with create-update it updates
// them, and an element removed leaves its app.
func TestAppSetApplicationsSyncPolicies(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "appset-policy")
	repo.write(map[string]string{"app/cm.yaml": configMap("cm", "v1")})
	sha := repo.commitAndPush("one app")
	c := temporalClient(t)
	version := func(name string) string {
		v, err := queryView(t, c, name)
		require.NoError(t, err)
		return v.Metadata.Annotations["version"]
	}
	mustFerry(t, "appset", "apply", "-f", writeFile(t, listAppSet("pol", repo.URL, "create-only", "v1", 2)))
	waitApp(t, "pol-0", sha, 3*time.Minute)
	waitApp(t, "pol-1", sha, time.Minute)

	// create-only: v2 of the template, and a third element.
	mustFerry(t, "appset", "apply", "-f", writeFile(t, listAppSet("pol", repo.URL, "create-only", "v2", 3)))
	waitApp(t, "pol-2", sha, 2*time.Minute)
	require.Equal(t, "v2", version("pol-2"), "a new app has the new template")
	require.Equal(t, "v1", version("pol-0"), "create-only: an existing app is not updated")

	// create-update: the template change reaches every app; an element
	// removed leaves its app.
	mustFerry(t, "appset", "apply", "-f", writeFile(t, listAppSet("pol", repo.URL, "create-update", "v3", 2)))
	eventually(t, time.Minute, "create-update updates the apps", func() (bool, string) {
		return version("pol-0") == "v3" && version("pol-1") == "v3", version("pol-0") + " " + version("pol-1")
	})
	// The reconcile that updated them kept pol-2: the set says so.
	eventually(t, time.Minute, "the set keeps pol-2", func() (bool, string) {
		v, err := queryAppSet(t, c, "pol")
		if err != nil {
			return false, err.Error()
		}
		for _, r := range v.Status.Resources {
			if r.Name == "pol-2" {
				return strings.Contains(r.Message, "no longer generated; kept"), r.Message
			}
		}
		return false, fmt.Sprint(setApps(v))
	})
	v, err := queryView(t, c, "pol-2")
	require.NoError(t, err, "create-update: the app of a removed element stays")
	require.Equal(t, "v2", v.Metadata.Annotations["version"])
	mustFerry(t, "appset", "refresh", "pol")

	// sync (the default): the removed element's app is deleted.
	mustFerry(t, "appset", "apply", "-f", writeFile(t, listAppSet("pol", repo.URL, "", "v3", 2)))
	appGone(t, c, "pol-2")
	mustFerry(t, "appset", "delete", "pol")
	appGone(t, c, "pol-0")
	appGone(t, c, "pol-1")
}
