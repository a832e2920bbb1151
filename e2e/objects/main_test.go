// Package objects shows Argo CD's Application objects of a control cluster
// run as Ferry's apps, on the real stack: kubectl apply, get, wait, patch
// the operation, annotate for a refresh, delete with and without the
// resources finalizer, and a worker killed while objects are applied.
package objects

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

var regions = []string{"us-east-1", "eu-west-1"}

var stack *devenv.Stack

// TestMain starts one stack with two regions and a control cluster. With
// -short there is no stack and every test skips, saying so.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions, Control: true}, &stack))
}

func newEnv(t *testing.T) *e2etest.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real stack with a control cluster: run without -short")
	}
	return &e2etest.Env{Stack: stack, Regions: regions}
}

// kubectl runs kubectl against the control cluster's namespace, with stdin.
func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	return e2etest.ControlKubectlErr(stack, stdin, args...)
}

func mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, stdin, args...)
	require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
	return out
}

// object is an Application object as kubectl gets it.
type object struct {
	Metadata struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Finalizers  []string          `json:"finalizers"`
	} `json:"metadata"`
	Operation json.RawMessage `json:"operation"`
	Status    struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		OperationState *struct {
			Phase string `json:"phase"`
		} `json:"operationState"`
		Conditions []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"conditions"`
		Resources []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"resources"`
		ReconciledAt string `json:"reconciledAt"`
		SourceType   string `json:"sourceType"`
		Summary      struct {
			Images []string `json:"images"`
		} `json:"summary"`
	} `json:"status"`
}

// getObject gets an Application object of the control namespace; ok is
// false when there is none.
func getObject(t *testing.T, name string) (o object, ok bool, state string) {
	t.Helper()
	return getObjectIn(t, stack.ControlNamespace, name)
}

// getObjectIn gets an Application object of namespace ns.
func getObjectIn(t *testing.T, ns, name string) (o object, ok bool, state string) {
	t.Helper()
	out, err := kubectl(t, "", "-n", ns, "get", "application", name, "-o", "json")
	if err != nil {
		return o, false, out
	}
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	return o, true, describe(o)
}

func describe(o object) string {
	b, _ := json.Marshal(o.Status)
	return string(b) + " operation " + string(o.Operation)
}

// waitObject waits until the object named name satisfies cond.
func waitObject(t *testing.T, name string, timeout time.Duration, what string, cond func(o object) bool) object {
	t.Helper()
	return waitObjectIn(t, stack.ControlNamespace, name, timeout, what, cond)
}

// waitObjectIn waits until the object name of namespace ns satisfies cond.
func waitObjectIn(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(o object) bool) object {
	t.Helper()
	var got object
	e2etest.Eventually(t, timeout, ns+"/"+name+": "+what, func() (bool, string) {
		o, ok, state := getObjectIn(t, ns, name)
		got = o
		return ok && cond(o), state
	})
	return got
}

// readCorpus reads a file of Argo CD's example apps.
func readCorpus(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus, path))
	require.NoError(t, err)
	return string(b)
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
