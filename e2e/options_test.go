package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/workflows"
)

// greetingConfigMap is a ConfigMap "settings" with data.greeting.
func greetingConfigMap(greeting string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  greeting: " + greeting + "\n"
}

// greetings is data.greeting of ConfigMap "settings" in each region ("-"
// where it is missing).
func greetings(t *testing.T, namespace string) string {
	t.Helper()
	var out []string
	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps(namespace).Get(context.Background(), "settings", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, r+"=-")
		case err != nil:
			t.Fatalf("get ConfigMap %s/settings in %s: %v", namespace, r, err)
		default:
			out = append(out, r+"="+cm.Data["greeting"])
		}
	}
	return strings.Join(out, " ")
}

// everywhere is what greetings says when every region has greeting.
func everywhere(greeting string) string {
	var out []string
	for _, r := range regions {
		out = append(out, r+"="+greeting)
	}
	return strings.Join(out, " ")
}

// TestHardRefreshRendersAgain: an app whose render depends on more than its
// commit (an unpinned remote Kustomize base, ref=main of another repo).
// When the base moves, a refresh finds the app's commit unchanged and keeps
// the cached render; `ferry app refresh --hard` renders again, as Argo CD's
// hard refresh does, and the automated app syncs what the base now says.
// A render sandbox has no network, so remote bases need --render-sandbox
// none (README, "Rendering in a sandbox").
func TestHardRefreshRendersAgain(t *testing.T) {
	startWorker(t, "--kustomize-allow-remote-bases", "--render-sandbox", "none")
	base := newRepo(t, "hard-base")
	base.write(map[string]string{"base/kustomization.yaml": "resources:\n- cm.yaml\n", "base/cm.yaml": greetingConfigMap("v1")})
	base.commitAndPush("base v1")
	repo := newRepo(t, "hard-app")
	repo.write(map[string]string{"app/kustomization.yaml": "resources:\n- " + base.URL + "//base?ref=main\n"})
	sha := repo.commitAndPush("app on the base's main")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("hard", repo.URL, "app", "hard", true, "3m")))
	waitApp(t, "hard", sha, 3*time.Minute)
	require.Equal(t, everywhere("v1"), greetings(t, "hard"))

	base.write(map[string]string{"base/cm.yaml": greetingConfigMap("v2")})
	base.commitAndPush("base v2")

	before := reconciledAt(t, "hard")
	mustFerry(t, "app", "refresh", "hard")
	waitReconciledAfter(t, "hard", before)
	waitApp(t, "hard", sha, time.Minute)
	require.Equal(t, everywhere("v1"), greetings(t, "hard"), "a normal refresh of an unmoved commit keeps the cached render")

	mustFerry(t, "app", "refresh", "hard", "--hard")
	eventually(t, time.Minute, "the base's v2 synced in every region", func() (bool, string) {
		got := greetings(t, "hard")
		return got == everywhere("v2"), got
	})
	waitApp(t, "hard", sha, time.Minute)
	mustFerry(t, "app", "delete", "hard", "--cascade")
}

func reconciledAt(t *testing.T, name string) time.Time {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	require.NotNil(t, v.Status.ReconciledAt)
	return *v.Status.ReconciledAt
}

func waitReconciledAfter(t *testing.T, name string, before time.Time) {
	t.Helper()
	c := temporalClient(t)
	eventually(t, time.Minute, "app "+name+" reconciled again", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		at := v.Status.ReconciledAt
		return at != nil && at.After(before), fmt.Sprintf("reconciled at %v", at)
	})
}

// TestDeleteWithResourcesFinalizer: an app carrying Argo CD's resources
// finalizer is deleted with its resources by a plain `ferry app delete`;
// --cascade=false keeps them, as argocd app delete --cascade=false does;
// an app without the finalizer keeps them unless --cascade is given.
func TestDeleteWithResourcesFinalizer(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "finalized")
	repo.write(map[string]string{"app/cm.yaml": greetingConfigMap("hello")})
	sha := repo.commitAndPush("a ConfigMap")
	withFinalizer := func(name, finalizer string) string {
		y := appYAML(name, repo.URL, "app", name, true, "3m")
		if finalizer == "" {
			return y
		}
		return strings.Replace(y, "  name: "+name+"\n", "  name: "+name+"\n  finalizers: ["+finalizer+"]\n", 1)
	}
	apps := map[string]string{
		"fin-cascade":    app.ResourcesFinalizer,
		"fin-background": app.BackgroundFinalizer,
		"fin-kept":       app.ResourcesFinalizer,
		"fin-none":       "",
	}
	for name, f := range apps {
		mustFerry(t, "app", "apply", "-f", writeFile(t, withFinalizer(name, f)))
	}
	for name := range apps {
		waitApp(t, name, sha, 3*time.Minute)
		require.Equal(t, everywhere("hello"), greetings(t, name), name)
	}

	// The delete returns once the resources are gone.
	mustFerry(t, "app", "delete", "fin-cascade")
	require.Equal(t, everywhere("-"), greetings(t, "fin-cascade"), "deleted with the app (resources finalizer, foreground)")
	mustFerry(t, "app", "delete", "fin-background")
	require.Equal(t, everywhere("-"), greetings(t, "fin-background"), "deleted with the app (background finalizer)")

	mustFerry(t, "app", "delete", "fin-kept", "--cascade=false")
	require.Equal(t, everywhere("hello"), greetings(t, "fin-kept"), "--cascade=false keeps the resources")
	mustFerry(t, "app", "delete", "fin-none")
	require.Equal(t, everywhere("hello"), greetings(t, "fin-none"), "without the finalizer, delete keeps the resources")
	c := temporalClient(t)
	for name := range apps {
		desc, err := c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(name), "")
		require.NoError(t, err)
		require.NotEqual(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.WorkflowExecutionInfo.GetStatus(), "app %s is deleted", name)
	}
}
