package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	crdfiles "github.com/ferry-gitops/ferry/deploy/crds"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The control cluster of a stack (Options.Control): the API server where
// Applications, AppProjects and ApplicationSets live as objects, as in Argo
// CD's own cluster. Its kubeconfig context is ControlContext; the apps'
// namespace is ControlNamespace.
const (
	ControlContext   = "control"
	ControlNamespace = "argocd"
)

// newControl is the control cluster: etcd, kube-apiserver and
// kube-controller-manager (namespaces, garbage collection of owned
// objects); no scheduler, no Node: nothing runs there.
func newControl(stateDir, toolsBin string, env []string, ports []int, logf func(string, ...any)) *region {
	return newRegion(ControlContext, stateDir, toolsBin, env, ports, logf)
}

// startControl brings the control cluster up and returns once its
// controller manager runs, namespace argocd exists and the CRDs of
// deploy/crds are established. Its files are under DIR/regions/control. On error the caller stops it.
func (r *region) startControl(ctx context.Context) error {
	began := time.Now()
	if err := os.MkdirAll(filepath.Join(r.dir, "etcd"), 0o700); err != nil {
		return fmt.Errorf("control cluster: %w", err)
	}
	var err error
	if r.pki, err = writeRegionPKI(r.dir, r.name); err != nil {
		return err
	}
	r.kubeconfig = filepath.Join(r.dir, "kubeconfig")
	if err := writeKubeconfig(r.kubeconfig, []*region{r}); err != nil {
		return err
	}
	if err := r.startEtcd(ctx); err != nil {
		return err
	}
	if err := r.startAPIServer(ctx); err != nil {
		return err
	}
	if err := r.startControllerManager(); err != nil {
		return err
	}
	if err := r.kcm.waitReady(ctx, r.what("kube-controller-manager"), regionTimeout, r.healthz(r.kcmPort)); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(r.restConfig())
	if err != nil {
		return fmt.Errorf("control cluster: client: %w", err)
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControlNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("control cluster: create namespace %s: %w", ControlNamespace, err)
	}
	if err := r.installCRDs(ctx); err != nil {
		return err
	}
	r.logf("control cluster: ready after %s (%s)", since(began), r.server)
	return nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs applies the files of deploy/crds (server-side, as `kubectl
// apply --server-side -k deploy/crds` would) and waits until the API
// server serves each.
func (r *region) installCRDs(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(r.restConfig())
	if err != nil {
		return fmt.Errorf("control cluster: client: %w", err)
	}
	crdClient := dyn.Resource(crdResource)
	for _, file := range crdfiles.Names {
		data, err := crdfiles.Files.ReadFile(file)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("control cluster: deploy/crds/%s: %w", file, err)
		}
		if _, err := crdClient.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "ferry-dev", Force: true}); err != nil {
			return fmt.Errorf("control cluster: install CRD %s: %w", u.GetName(), err)
		}
		if err := r.apiserver.waitReady(ctx, r.what("CRD "+u.GetName()+" established"), apiserverTimeout, func(ctx context.Context) error {
			return established(ctx, crdClient, u.GetName())
		}); err != nil {
			return err
		}
	}
	return nil
}

func established(ctx context.Context, c dynamic.ResourceInterface, name string) error {
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return err
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("CRD %s is not established yet", name)
}
