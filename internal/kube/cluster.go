package kube

import (
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Options tune a Cluster. Start from DefaultOptions.
type Options struct {
	// FieldManager is the name Ferry's server-side applies own fields under.
	// Changing it makes Ferry a new manager that conflicts with its old self.
	FieldManager string
	// Concurrency bounds the requests in flight for one group of objects
	// (one kind rank in Apply, one Compare, one delete pass).
	Concurrency int
	// CRDEstablishTimeout bounds how long Apply waits for the
	// CustomResourceDefinitions it applied to be Established before it
	// applies the objects ranked after them. Zero does not wait.
	CRDEstablishTimeout time.Duration
	// DiffDepth is how deep Compare's messages name differing paths
	// (3 gives "spec.template.spec").
	DiffDepth int
}

// DefaultOptions returns the options NewCluster uses.
func DefaultOptions() Options {
	return Options{
		FieldManager:        "ferry",
		Concurrency:         8,
		CRDEstablishTimeout: 30 * time.Second,
		DiffDepth:           3,
	}
}

// LoadConfig reads a kubeconfig: the file at kubeconfigPath, or the usual
// places (KUBECONFIG, ~/.kube/config, in-cluster) when it is empty; context
// picks a context, the current one when empty. Rate limits are raised well
// above client-go's defaults (5 QPS) because one sync sends a burst of
// requests per object.
func LoadConfig(kubeconfigPath, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfigPath != "" {
		rules.ExplicitPath = kubeconfigPath
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q context %q: %w", kubeconfigPath, context, err)
	}
	cfg.QPS = 100
	cfg.Burst = 200
	if cfg.UserAgent == "" {
		cfg.UserAgent = "ferry"
	}
	return cfg, nil
}

// Cluster talks to one Kubernetes cluster. It is safe for concurrent use.
type Cluster struct {
	opts      Options
	dynamic   dynamic.Interface
	discovery discovery.CachedDiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
}

// NewCluster builds a Cluster with DefaultOptions.
func NewCluster(cfg *rest.Config) (*Cluster, error) {
	return NewClusterWithOptions(cfg, DefaultOptions())
}

// NewClusterWithOptions builds a Cluster. It makes no request: discovery is
// loaded on first use and cached in memory.
func NewClusterWithOptions(cfg *rest.Config, opts Options) (*Cluster, error) {
	if opts.FieldManager == "" {
		return nil, errors.New("kube: Options.FieldManager is empty")
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		// Listing every kind (DeleteAll) meets deprecated ones each time:
		// say so once per process, not once per request.
		cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	cached := memory.NewMemCacheClient(dc)
	return &Cluster{
		opts:      opts,
		dynamic:   dyn,
		discovery: cached,
		mapper:    restmapper.NewDeferredDiscoveryRESTMapper(cached),
	}, nil
}

// Dynamic returns the cluster's dynamic client.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dynamic }

// RESTMapper returns the cluster's discovery-backed REST mapper.
func (c *Cluster) RESTMapper() meta.RESTMapper { return c.mapper }

// mapping resolves a group/kind (and version, when not empty) to its
// resource. A kind the cached discovery does not know may have been added
// since (a CRD applied a moment ago): the cache is reset and the lookup
// retried once.
func (c *Cluster) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	var versions []string
	if gvk.Version != "" {
		versions = []string{gvk.Version}
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), versions...)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), versions...)
	}
	return m, err
}

// resource returns the client for m's resource, in namespace ns when the
// resource is namespaced.
func (c *Cluster) resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	r := c.dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(ns)
	}
	return r
}

// place gives obj its namespace the way the API server would see it: a
// namespaced object without one gets defaultNS; a cluster-scoped object
// loses any it names. It returns obj's mapping.
func (c *Cluster) place(obj *unstructured.Unstructured, defaultNS string) (*meta.RESTMapping, error) {
	m, err := c.mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			if defaultNS == "" {
				return nil, invalidf("namespaced object has no namespace and the destination names none")
			}
			obj.SetNamespace(defaultNS)
		}
	} else {
		obj.SetNamespace("")
	}
	return m, nil
}
