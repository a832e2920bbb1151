package deploy

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guestbook is an Application as Argo CD's getting-started guide has users
// write it, with one field Ferry does not know (spec.source.extra): the API
// server keeps it, for the worker to name in the app's conditions.
const guestbook = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/argoproj/argocd-example-apps.git
    targetRevision: HEAD
    path: guestbook
    extra: kept
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
`

// TestCRDsInstall installs deploy/crds with kubectl as an operator would,
// into the control cluster (which the stack set up with the same CRDs from
// internal/crds: a server-side apply of different ones would conflict), then
// works with an Application as Argo CD's users do: apply it, see
// kubectl print its SYNC STATUS and HEALTH STATUS, wait on its status, and
// reach every kind by its short name.
func TestCRDsInstall(t *testing.T) {
	if stack == nil {
		t.Skip("-short: no API server")
	}
	kubectl := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(stack.ToolsBin, "kubectl"), append([]string{"--kubeconfig", stack.Kubeconfig, "--context", stack.ControlContext}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, err := kubectl(stdin, args...)
		require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
		return out
	}
	must("", "apply", "--server-side", "--field-manager", fieldManager, "-k", "crds")
	must("", "wait", "--for=condition=Established", "--timeout=60s",
		"crd/applications.argoproj.io", "crd/appprojects.argoproj.io", "crd/applicationsets.argoproj.io")

	must(guestbook, "apply", "-f", "-")
	assert.Equal(t, "kept", must("", "get", "-n", argocdNamespace, "app", "guestbook", "-o", "jsonpath={.spec.source.extra}"),
		"a field Ferry does not read is kept for the worker to name")
	must("", "patch", "-n", argocdNamespace, "application", "guestbook", "--subresource=status", "--type=merge",
		"-p", `{"status":{"sync":{"status":"Synced","revision":"abc123"},"health":{"status":"Healthy"}}}`)

	table := strings.Fields(strings.Split(must("", "get", "applications", "-n", argocdNamespace), "\n")[0])
	assert.Equal(t, []string{"NAME", "SYNC", "STATUS", "HEALTH", "STATUS"}, table, "Argo CD's columns")
	assert.Regexp(t, `(?m)^guestbook\s+Synced\s+Healthy\s*$`, must("", "get", "applications", "-n", argocdNamespace))
	assert.Regexp(t, `(?m)^guestbook\s+Synced\s+Healthy\s+abc123\s+default\s*$`, must("", "get", "apps", "-n", argocdNamespace, "-o", "wide"))
	must("", "wait", "-n", argocdNamespace, "--for=jsonpath={.status.sync.status}=Synced", "--timeout=10s", "application/guestbook")
	for _, short := range []string{"appproj", "appset"} {
		must("", "get", short, "-n", argocdNamespace)
	}

	// The API server checks types, as Argo CD's CRD has it do: a string
	// where a number belongs is refused at apply, naming the field.
	out, err := kubectl(strings.Replace(guestbook, "  project: default\n", "  project: default\n  revisionHistoryLimit: ten\n", 1), "apply", "-f", "-")
	require.Error(t, err)
	assert.Contains(t, out, "spec.revisionHistoryLimit")
}
