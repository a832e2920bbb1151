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

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
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

func reconciledAt(t *testing.T, name string) time.Time {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	require.NotNil(t, v.Status.ReconciledAt)
	return *v.Status.ReconciledAt
}

// refreshed asks app name for a refresh and waits for the reconcile it
// makes. The last reconcile is read before the refresh: read after it, it
// could already be the refresh's own, and the wait would be for the next
// poll.
func refreshed(t *testing.T, name string) {
	t.Helper()
	before := reconciledAt(t, name)
	mustFerry(t, "app", "refresh", name)
	waitReconciledAfter(t, name, before)
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
// an app without the finalizer is deleted with them too, as argocd app
// delete cascades by default.
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
	require.Equal(t, everywhere("-"), greetings(t, "fin-none"), "without the finalizer, delete cascades by default")
	c := temporalClient(t)
	for name := range apps {
		desc, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
		require.NoError(t, err)
		require.NotEqual(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.WorkflowExecutionInfo.GetStatus(), "app %s is deleted", name)
	}
}
