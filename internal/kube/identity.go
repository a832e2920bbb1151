package kube

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// A Cluster writes as the identity of its kubeconfig unless it is a view
// made by As or AsResolved: then its writes (applies and their dry runs,
// deletes, prunes, the namespace of CreateNamespace) go through a client
// that impersonates another user, typically a ServiceAccount, so that the
// cluster's RBAC decides what an app may change. Reads (the live cache,
// gets and lists, discovery) stay on the Cluster's own identity: one watch
// per kind serves every app whoever it writes as.

// identities builds and keeps one dynamic client per impersonated user.
type identities struct {
	base *rest.Config
	mu   sync.Mutex
	dyn  map[string]dynamic.Interface
}

func newIdentities(base *rest.Config) *identities {
	return &identities{base: base, dyn: map[string]dynamic.Interface{}}
}

// client returns the dynamic client that impersonates user ("" is the
// Cluster's own identity, which the caller serves itself).
func (ids *identities) client(user string) (dynamic.Interface, error) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if d, ok := ids.dyn[user]; ok {
		return d, nil
	}
	if ids.base == nil {
		return nil, fmt.Errorf("client impersonating %s: the cluster was built without a rest.Config to impersonate with", user)
	}
	cfg := rest.CopyConfig(ids.base)
	// The API server adds a ServiceAccount's groups itself when none are
	// impersonated.
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client impersonating %s: %w", user, err)
	}
	ids.dyn[user] = d
	return d, nil
}

// writeAs is who a view writes as, found out on its first write.
type writeAs struct {
	resolve func(ctx context.Context) (string, error)
	once    sync.Once
	user    string
	err     error
	// resolved is set once user and err are.
	resolved atomic.Bool
}

// As returns a view of c that writes as user by impersonation (user "" is
// c's own identity). The view shares c's discovery, live cache, write log
// and compare results; clients are built once per user and kept.
func (c *Cluster) As(user string) *Cluster {
	return c.AsResolved(func(context.Context) (string, error) { return user, nil })
}

// AsResolved is As with the user found out by resolve, called once, on the
// view's first write: a compare that sends nothing asks nothing. An error
// of resolve fails every write of the view with it.
func (c *Cluster) AsResolved(resolve func(ctx context.Context) (string, error)) *Cluster {
	view := *c
	view.as = &writeAs{resolve: resolve}
	return &view
}

// WriteUser is the user the view writes as: "" for c's own identity. It
// resolves the user if no write has yet.
func (c *Cluster) WriteUser(ctx context.Context) (string, error) {
	if c.as == nil {
		return "", nil
	}
	c.as.once.Do(func() {
		c.as.user, c.as.err = c.as.resolve(ctx)
		c.as.resolved.Store(true)
	})
	return c.as.user, c.as.err
}

// WriteUserFailed is the error the view's user was found out with: nil
// when no write asked yet, or it was found. Call it once the view's writes
// are done.
func (c *Cluster) WriteUserFailed() error {
	if c.as == nil || !c.as.resolved.Load() {
		return nil
	}
	return c.as.err
}

// Writer returns the dynamic client c writes with: for hooks, which the
// Cluster does not run itself.
func (c *Cluster) Writer(ctx context.Context) (dynamic.Interface, error) {
	user, err := c.WriteUser(ctx)
	if err != nil || user == "" {
		return c.dynamic, err
	}
	return c.identities.client(user)
}

// writeResource is resource for a write: through Writer.
func (c *Cluster) writeResource(ctx context.Context, m *meta.RESTMapping, ns string) (dynamic.ResourceInterface, error) {
	d, err := c.Writer(ctx)
	if err != nil {
		return nil, err
	}
	r := d.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(ns), nil
	}
	return r, nil
}
