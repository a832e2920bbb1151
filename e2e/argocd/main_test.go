//go:build argocd

// Package argocd runs Argo CD itself on the real stack (built from its Go
// module by hack/tools.sh argocd): Argo CD syncs Argo CD's example apps as
// its users run them. `make test-argocd` runs it; `make test` does not build
// Argo CD (docs/contributing/testing.md).
package argocd

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

var regions = []string{"us-east-1", "eu-west-1"}

var (
	stack  *devenv.Stack
	argoCD *devenv.ArgoCD
)

// TestMain starts one stack with two regions and a control cluster, and
// Argo CD in the first region.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions, Control: true}, &stack))
}

func newEnv(t *testing.T) *e2etest.Env {
	t.Helper()
	if argoCD == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		a, err := stack.StartArgoCD(ctx, devenv.ArgoCDOptions{PersistResourceHealth: true, AppSets: true})
		require.NoError(t, err)
		argoCD = a
	}
	t.Cleanup(func() {
		if err := argoCD.Exited(); err != nil {
			t.Errorf("argo cd died during the test: %v", err)
		}
	})
	return &e2etest.Env{Stack: stack, Regions: regions}
}

// argoClient is a dynamic client of Argo CD's home region.
func argoClient(t *testing.T) dynamic.Interface {
	t.Helper()
	rc, err := stack.RestConfig(argoCD.Home)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(rc)
	require.NoError(t, err)
	return dyn
}

// applyArgoApp creates an Application in Argo CD's namespace from YAML.
func applyArgoApp(t *testing.T, doc string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	_, err := argoClient(t).Resource(devenv.ArgoCDAppResource).Namespace(devenv.ArgoCDNamespace).
		Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "e2e", Force: true})
	require.NoError(t, err)
}

// argoApp is an Application of Argo CD as its controller reports it.
type argoApp struct {
	Sync, Health, Revision, Operation string
	Conditions                        []any
}

func getArgoApp(t *testing.T, name string) (argoApp, error) {
	u, err := argoClient(t).Resource(devenv.ArgoCDAppResource).Namespace(devenv.ArgoCDNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return argoApp{}, err
	}
	return statusOf(u), nil
}

func (a argoApp) String() string {
	return fmt.Sprintf("%s/%s at %.7s, operation %q, conditions %v", a.Sync, a.Health, a.Revision, a.Operation, a.Conditions)
}
