package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// policyAppSet is listAppSet with spec.syncPolicy written out
// (applicationsSync, preserveResourcesOnDeletion) and n = 0 giving
// generators: [].
func policyAppSet(name, repoURL, syncPolicy string, n int) string {
	set := listAppSet(name, repoURL, "", "v1", n)
	if n == 0 {
		set = strings.Replace(set, "  generators:\n  - list:\n      elements:\n", "  generators: []\n", 1)
	}
	if syncPolicy != "" {
		set += "  syncPolicy: " + syncPolicy + "\n"
	}
	return set
}

// setUpToDate waits until the set's last reconcile succeeded with its apps
// as names, and returns its view.
func setUpToDate(t *testing.T, c client.Client, name string, names ...string) *contract.AppSetView {
	t.Helper()
	var v *contract.AppSetView
	eventually(t, 2*time.Minute, "applicationset "+name+" up to date with "+fmt.Sprint(names), func() (bool, string) {
		var err error
		if v, err = queryAppSet(t, c, name); err != nil {
			return false, err.Error()
		}
		ok := condition(v, contract.AppSetResourcesUpToDate).Status == "True" && fmt.Sprint(setApps(v)) == fmt.Sprint(names)
		return ok, fmt.Sprintf("%+v", v.Status)
	})
	return v
}

// cmExists reports whether the app's ConfigMap "cm" is in every region.
func cmExists(t *testing.T, namespace string) bool {
	t.Helper()
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps(namespace).Get(context.Background(), "cm", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false
		}
		require.NoError(t, err)
	}
	return true
}

// TestAppSetAsArgoCDLeavesIt follows Argo CD's ApplicationSet controller:
// generated apps carry resources-finalizer.argocd.argoproj.io unless
// preserveResourcesOnDeletion; the conditions say what it says; generators:
// [] is accepted, and the apps stay under create-update and go under the
// default policy; deleting a create-only or create-update set keeps its
// apps and their resources (no longer the set's), as Argo CD drops the
// set's owner references.
func TestAppSetAsArgoCDLeavesIt(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "appset-argocd")
	repo.write(map[string]string{"app/cm.yaml": configMap("cm", "v1")})
	sha := repo.commitAndPush("one app")
	c := temporalClient(t)

	// The finalizer, and the conditions in Argo CD's words.
	mustFerry(t, "appset", "apply", "-f", writeFile(t, policyAppSet("fin", repo.URL, "", 1)))
	mustFerry(t, "appset", "apply", "-f", writeFile(t, policyAppSet("kept", repo.URL, "{preserveResourcesOnDeletion: true}", 1)))
	waitApp(t, "fin-0", sha, 3*time.Minute)
	waitApp(t, "kept-0", sha, time.Minute)
	fin, err := queryView(t, c, "fin-0")
	require.NoError(t, err)
	require.Equal(t, []string{"resources-finalizer.argocd.argoproj.io"}, fin.Metadata.Finalizers)
	require.Contains(t, mustFerry(t, "app", "get", "fin-0", "-o", "yaml"), "resources-finalizer.argocd.argoproj.io")
	kept, err := queryView(t, c, "kept-0")
	require.NoError(t, err)
	require.Empty(t, kept.Metadata.Finalizers, "preserveResourcesOnDeletion: no finalizer")
	v := setUpToDate(t, c, "fin", "fin-0")
	for typ, want := range map[string][3]string{
		contract.AppSetResourcesUpToDate:   {"True", "ApplicationSetUpToDate", "All applications have been generated successfully"},
		contract.AppSetErrorOccurred:       {"False", "ApplicationSetUpToDate", "All applications have been generated successfully"},
		contract.AppSetParametersGenerated: {"True", "ParametersGenerated", "Successfully generated parameters for all Applications"},
	} {
		got := condition(v, typ)
		require.Equal(t, want, [3]string{got.Status, got.Reason, got.Message}, "condition %s", typ)
	}

	// generators: [] under the default policy deletes the app, and its
	// finalizer its resources.
	require.True(t, cmExists(t, "fin-0"))
	mustFerry(t, "appset", "apply", "-f", writeFile(t, policyAppSet("fin", repo.URL, "", 0)))
	appGone(t, c, "fin-0")
	eventually(t, time.Minute, "fin-0's ConfigMap deleted", func() (bool, string) { return !cmExists(t, "fin-0"), "still there" })
	setUpToDate(t, c, "fin")
	mustFerry(t, "appset", "delete", "fin")
	mustFerry(t, "appset", "delete", "kept")
	appGone(t, c, "kept-0")

	// create-update: generators: [] keeps the apps; deleting the set
	// keeps them too, no longer the set's.
	mustFerry(t, "appset", "apply", "-f", writeFile(t, policyAppSet("upd", repo.URL, "{applicationsSync: create-update}", 2)))
	mustFerry(t, "appset", "apply", "-f", writeFile(t, policyAppSet("only", repo.URL, "{applicationsSync: create-only}", 1)))
	for _, name := range []string{"upd-0", "upd-1", "only-0"} {
		waitApp(t, name, sha, 3*time.Minute)
	}
	mustFerry(t, "appset", "apply", "-f", writeFile(t, policyAppSet("upd", repo.URL, "{applicationsSync: create-update}", 0)))
	eventually(t, 2*time.Minute, "create-update keeps the apps generators: [] no longer generates", func() (bool, string) {
		v, err := queryAppSet(t, c, "upd")
		if err != nil {
			return false, err.Error()
		}
		kept := 0
		for _, r := range v.Status.Resources {
			if strings.Contains(r.Message, "no longer generated; kept") {
				kept++
			}
		}
		return kept == 2 && fmt.Sprint(setApps(v)) == "[upd-0 upd-1]", fmt.Sprintf("%+v", v.Status)
	})
	for _, set := range []string{"upd", "only"} {
		require.Contains(t, mustFerry(t, "appset", "delete", set), fmt.Sprintf("applicationset %q deleted", set))
	}
	// The deletion that releases the apps (version appset-delete-policy).
	recordWorkflowHistories(t, contract.AppSetWorkflowID("only"), "appset-delete-policy")
	for _, name := range []string{"upd-0", "upd-1", "only-0"} {
		a, err := queryView(t, c, name)
		require.NoError(t, err, "app %s stays after its set's deletion", name)
		require.Equal(t, &contract.Owner{}, a.Owner, "app %s is no longer the set's", name)
		require.True(t, cmExists(t, name), "app %s keeps its resources", name)
		mustFerry(t, "app", "delete", name, "--cascade")
	}
}
