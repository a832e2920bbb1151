package regionlive

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Regions connects to regions through the kubeconfig contexts named after
// them; a Region, once made, is kept. It is safe for concurrent use.
type Regions struct {
	// Kubeconfig is the kubeconfig file; "" follows kube.LoadConfig's
	// rules ($KUBECONFIG, ~/.kube/config).
	Kubeconfig string

	mu   sync.Mutex
	made map[string]*Region
}

// Region is one region's cluster, read through the kubeconfig context named
// after it.
type Region struct {
	Name    string
	Cluster *kube.Cluster
	Client  kubernetes.Interface
}

// ConfigError is a region whose kubeconfig context cannot be loaded.
type ConfigError struct {
	Region string
	Err    error // kube.LoadConfig's
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("region %s: %v (each region is read through the kubeconfig context named after it)", e.Region, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Region returns the region called name, connecting on first use. An error
// loading its kubeconfig context is a *ConfigError.
func (rs *Regions) Region(name string) (*Region, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.made[name]; r != nil {
		return r, nil
	}
	cfg, err := kube.LoadConfig(rs.Kubeconfig, name)
	if err != nil {
		return nil, &ConfigError{Region: name, Err: err}
	}
	cluster, err := kube.NewCluster(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := &Region{Name: name, Cluster: cluster, Client: cs}
	if rs.made == nil {
		rs.made = map[string]*Region{}
	}
	rs.made[name] = r
	return r, nil
}

// Get reads one object; nil, nil when it does not exist.
func (r *Region) Get(ctx context.Context, k app.ResourceKey) (*unstructured.Unstructured, error) {
	ri, err := r.resource(schema.GroupKind{Group: k.Group, Kind: k.Kind}, k.Version, k.Namespace)
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, k.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// resource is the dynamic client of a kind, in namespace when the kind is
// namespaced.
func (r *Region) resource(gk schema.GroupKind, version, namespace string) (dynamic.ResourceInterface, error) {
	var versions []string
	if version != "" {
		versions = []string{version}
	}
	m, err := r.Cluster.RESTMapper().RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Cluster.Dynamic().Resource(m.Resource).Namespace(namespace), nil
	}
	return r.Cluster.Dynamic().Resource(m.Resource), nil
}

// describe names k in messages: "apps/Deployment shop/web".
func describe(k app.ResourceKey) string {
	kind, name := k.Kind, k.Name
	if k.Group != "" {
		kind = k.Group + "/" + k.Kind
	}
	if k.Namespace != "" {
		name = k.Namespace + "/" + k.Name
	}
	return kind + " " + name
}
