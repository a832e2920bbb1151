package kube

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
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

	"github.com/ferry-gitops/ferry/internal/health"
)

// Options tune a Cluster. Start from DefaultOptions.
type Options struct {
	// FieldManager is the name Ferry's server-side applies own fields under.
	// Changing it makes Ferry a new manager that conflicts with its old self.
	FieldManager string
	// Concurrency bounds the requests in flight for one group of objects
	// (one kind rank in Apply, one Compare, one delete pass). The default,
	// 20, is Argo CD's controller's parallelism limit; 8 left a 500-object
	// sync waiting on round trips with the API server's CPU idle (2.3 s
	// to apply them on two cores, 1.3 s at 24).
	Concurrency int
	// CRDEstablishTimeout bounds how long Apply waits for the
	// CustomResourceDefinitions it applied to be Established before it
	// applies the objects ranked after them. Zero does not wait.
	CRDEstablishTimeout time.Duration
	// DiffDepth is how deep Compare's messages name differing paths
	// (3 gives "spec.template.spec").
	DiffDepth int
	// HealthPoll is how often a wait between waves (or for pruned objects
	// to go) looks again.
	HealthPoll time.Duration
	// WaveTimeout bounds the wait for one wave to become healthy when the
	// request sets none.
	WaveTimeout time.Duration
	// CompareCacheTTL bounds how long an incremental compare result is
	// reused while neither the desired object nor the live one changes (a
	// new admission webhook or default can change a prediction without
	// either). Zero disables the reuse.
	CompareCacheTTL time.Duration
	// Health tells an object's health; its zero value is package health's
	// built-in checks, a Custom adds the operator's Lua health checks.
	Health health.Checker
	// Excluded tells which kinds the cluster's resource.exclusions or
	// inclusions leave alone (nil: none): a delete of an app's resources
	// neither lists nor deletes them, as Argo CD ignores them everywhere.
	Excluded func(group, kind string) bool
}

// DefaultOptions returns the options NewCluster uses.
func DefaultOptions() Options {
	return Options{
		FieldManager:        "ferry",
		Concurrency:         20,
		CRDEstablishTimeout: 30 * time.Second,
		DiffDepth:           3,
		HealthPoll:          500 * time.Millisecond,
		WaveTimeout:         5 * time.Minute,
		CompareCacheTTL:     10 * time.Minute,
	}
}

// HealthChecker is how the cluster tells an object's health (Options.Health),
// for what reads health beside the compare (hooks).
func (c *Cluster) HealthChecker() health.Checker { return c.opts.Health }

// LoadConfig reads a kubeconfig: the file at kubeconfigPath, or the usual
// places (KUBECONFIG, ~/.kube/config, in-cluster) when it is empty; context
// picks a context, the current one when empty. Rate limits are raised far
// above client-go's defaults (5 QPS): one sync sends a request or two per
// object (a 500-object sync at 100 QPS spent 3 s waiting on the limiter
// alone), and a region worker serves many apps. The requests in flight stay
// bounded by Options.Concurrency per operation, and the API server's
// priority and fairness protects it from the rest.
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
	cfg.QPS = 1000
	cfg.Burst = 2000
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
	// writes remembers what Ferry wrote and deleted, so that cached reads
	// are never older than Ferry's own writes and drift ignores them.
	writes *writeLog
	// results holds the last compare of each object (compare_cache.go).
	results *resultCache
	// live is the informer cache, once EnableLiveCache has run; a pointer,
	// so that the views of As share it.
	liveP *atomic.Pointer[liveCache]
	// identities holds the impersonating clients of the views (identity.go).
	identities *identities
	// as is who this view writes as; nil: the kubeconfig's identity.
	as *writeAs
}

// NewCluster builds a Cluster with DefaultOptions.
func NewCluster(cfg *rest.Config) (*Cluster, error) {
	return NewClusterWithOptions(cfg, DefaultOptions())
}

// NewClusterWithOptions builds a Cluster. It makes no request: discovery is
// loaded on first use and cached in memory.
func NewClusterWithOptions(cfg *rest.Config, opts Options) (*Cluster, error) {
	if err := checkOptions(&opts); err != nil {
		return nil, err
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
	return newCluster(dyn, dc, newIdentities(cfg), opts), nil
}

// NewClusterForClients builds a Cluster over clients the caller made: a
// fake dynamic client and discovery in unit tests (see
// docs/contributing/testing.md). It makes no request. Such a Cluster has no
// rest.Config to impersonate with: a view of As or AsResolved that names
// a user fails its writes.
func NewClusterForClients(dyn dynamic.Interface, dc discovery.DiscoveryInterface, opts Options) (*Cluster, error) {
	if err := checkOptions(&opts); err != nil {
		return nil, err
	}
	return newCluster(dyn, dc, newIdentities(nil), opts), nil
}

// checkOptions refuses options a Cluster cannot work with, and raises
// those it can to the least that works.
func checkOptions(opts *Options) error {
	if opts.FieldManager == "" {
		return errors.New("kube: Options.FieldManager is empty")
	}
	opts.Concurrency = max(opts.Concurrency, 1)
	if opts.HealthPoll <= 0 {
		opts.HealthPoll = 500 * time.Millisecond
	}
	return nil
}

func newCluster(dyn dynamic.Interface, dc discovery.DiscoveryInterface, ids *identities, opts Options) *Cluster {
	cached := memory.NewMemCacheClient(dc)
	return &Cluster{
		opts:       opts,
		dynamic:    dyn,
		discovery:  cached,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(cached),
		writes:     newWriteLog(),
		results:    newResultCache(),
		liveP:      &atomic.Pointer[liveCache]{},
		identities: ids,
	}
}

// Dynamic returns the cluster's dynamic client, of its own identity (see
// Writer).
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
// loses any it names. It returns obj's mapping; for a kind that pending (the
// CRDs of the same desired set) defines and the cluster does not serve yet,
// it places obj by the CRD's scope and returns a nil mapping.
func (c *Cluster) place(obj *unstructured.Unstructured, defaultNS string, pending map[schema.GroupKind]string) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	m, err := c.mapping(gvk)
	namespaced := false
	switch scope, ok := pending[gvk.GroupKind()]; {
	case err == nil:
		namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
	case meta.IsNoMatchError(err) && ok:
		namespaced, m, err = scope != "Cluster", nil, nil
	default:
		return nil, err
	}
	if namespaced {
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
