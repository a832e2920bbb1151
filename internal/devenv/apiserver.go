package devenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// StopAPIServer stops one region's kube-apiserver, as an outage of that
// region's control plane would look from outside: its port refuses
// connections. etcd keeps the region's data; the controller manager, the
// scheduler and kwok keep running, failing to reach it, until
// StartAPIServer.
func (s *Stack) StopAPIServer(region string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runningRegion(region)
	if err != nil {
		return fmt.Errorf("stop the kube-apiserver of region %s: %w", region, err)
	}
	r.mu.Lock()
	p := r.apiserver
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("stop the kube-apiserver of region %s: it is already stopped", region)
	}
	began := time.Now()
	// A second of grace, not stopGrace: its graceful shutdown drains long
	// watches, and an outage does not wait for them either.
	if err := p.stop(time.Second); err != nil {
		return fmt.Errorf("stop the kube-apiserver of region %s: %w", region, err)
	}
	// Stopped on purpose: Check and Stop skip it until it starts again.
	r.set(&r.apiserver, nil)
	s.logf("region %s: kube-apiserver stopped in %s", region, since(began))
	return nil
}

// StartAPIServer starts again a region's kube-apiserver that StopAPIServer
// stopped, on the same port, certificates and etcd, and returns once the
// region works as after Start: the API server ready (/readyz), and the
// controller manager, scheduler and kwok started afresh and ready, the fake
// Node Ready and schedulable. Those three would reconnect by themselves,
// but only as their informers' backoff allows (up to a minute after a long
// outage): meanwhile the Node stays tainted and new pods wait.
func (s *Stack) StartAPIServer(ctx context.Context, region string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runningRegion(region)
	if err != nil {
		return fmt.Errorf("start the kube-apiserver of region %s: %w", region, err)
	}
	r.mu.Lock()
	p := r.apiserver
	r.mu.Unlock()
	if p != nil {
		if done, _ := p.exited(); !done {
			return fmt.Errorf("start the kube-apiserver of region %s: it is running (StopAPIServer first)", region)
		}
		_ = p.stop(0) // an earlier start that failed: reap what is left of it
	}
	began := time.Now()
	r.mu.Lock()
	controllers := []*proc{r.kw, r.kcm, r.scheduler}
	r.mu.Unlock()
	if err := stopAll(controllers, stopGrace); err != nil {
		return fmt.Errorf("start the kube-apiserver of region %s: stop its controllers first: %w", region, err)
	}
	if err := r.startAPIServer(ctx); err != nil {
		// A process that did start but never got ready stays in r.apiserver:
		// Stop ends it with the rest of the stack.
		return fmt.Errorf("start the kube-apiserver of region %s again: %w", region, err)
	}
	s.logf("region %s: kube-apiserver ready again after %s (%s)", region, since(began), r.server)
	cs, err := kubernetes.NewForConfig(r.restConfig())
	if err != nil {
		return fmt.Errorf("region %s: client: %w", region, err)
	}
	// A new kwok has a new identity: it would wait for the old one's Node
	// lease to expire (40 s) before it runs the Node's pods.
	err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, r.nodeName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("region %s: delete the lease of Node %s: %w", region, r.nodeName, err)
	}
	if err := r.runControllers(ctx, cs); err != nil {
		return err
	}
	// The Node may still carry a taint the controller manager put on it
	// before the outage or during it.
	if err := r.kw.waitReady(ctx, r.what("kwok (Node "+r.nodeName+" schedulable)"), nodeBackTimeout,
		func(ctx context.Context) error { return nodeSchedulable(ctx, cs, r.nodeName) }); err != nil {
		return err
	}
	s.logf("region %s: back after %s", region, since(began))
	return nil
}

// nodeBackTimeout bounds the wait for the fake Node after a restart of the
// API server.
const nodeBackTimeout = 3 * time.Minute

// nodeSchedulable is nil once the Node is Ready and carries none of the
// taints the node lifecycle controller puts on a node it has lost.
func nodeSchedulable(ctx context.Context, cs kubernetes.Interface, name string) error {
	if err := nodeReady(ctx, cs, name); err != nil {
		return err
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return fmt.Errorf("node %s is tainted %s:%s", name, t.Key, t.Effect)
		}
	}
	return nil
}

// runningRegion returns the named region of a stack that is not stopped.
func (s *Stack) runningRegion(name string) (*region, error) {
	if s.stopped {
		return nil, errors.New("the stack is stopped")
	}
	r, ok := s.regions[name]
	if !ok {
		return nil, fmt.Errorf("no region %q in this stack (it has %v)", name, s.Regions)
	}
	return r, nil
}

// FreezeAPIServer stops one region's kube-apiserver in its tracks
// (SIGSTOP): its port still accepts connections, but nothing is answered
// until ThawAPIServer: a control plane that hangs rather than refuses.
func (s *Stack) FreezeAPIServer(region string) error {
	return s.signalAPIServer(region, syscall.SIGSTOP, "freeze")
}

// ThawAPIServer lets a frozen kube-apiserver run again (SIGCONT).
func (s *Stack) ThawAPIServer(region string) error {
	return s.signalAPIServer(region, syscall.SIGCONT, "thaw")
}

func (s *Stack) signalAPIServer(region string, sig syscall.Signal, what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runningRegion(region)
	if err != nil {
		return fmt.Errorf("%s the kube-apiserver of region %s: %w", what, region, err)
	}
	r.mu.Lock()
	p := r.apiserver
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s the kube-apiserver of region %s: it is stopped", what, region)
	}
	if err := syscall.Kill(p.pid(), sig); err != nil {
		return fmt.Errorf("%s the kube-apiserver of region %s: %w", what, region, err)
	}
	s.logf("region %s: kube-apiserver %s", region, what)
	return nil
}

// AuditLog is the path of a region's kube-apiserver audit log: one JSON
// event (audit.k8s.io/v1, level Metadata) per write by anyone but the
// control plane itself, with its user and the user it impersonated.
func (s *Stack) AuditLog(region string) string {
	return filepath.Join(s.LogDir, region+"-audit.log")
}
