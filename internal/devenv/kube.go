package devenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	etcdTimeout      = 30 * time.Second
	apiserverTimeout = 90 * time.Second
	regionTimeout    = 90 * time.Second // controllers, node and service account after the apiserver

	// fakeNodeAnnotation marks the Nodes kwok manages.
	fakeNodeAnnotation = "kwok.x-k8s.io/node"
)

// region is one region's control plane: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok with one fake Node.
type region struct {
	name       string
	dir        string // DIR/regions/<name>
	logDir     string // DIR/logs
	toolsBin   string
	env        []string
	pki        *regionPKI
	kubeconfig string // this region only, for its own components
	server     string // https://127.0.0.1:<port>
	nodeName   string
	logf       func(format string, args ...any)

	etcdPort, etcdPeerPort, apiPort, kcmPort, schedPort int
	kwokPort                                            int // the fake kubelet's: logs

	mu                                  sync.Mutex
	etcd, apiserver, kcm, scheduler, kw *proc
}

// regionPortCount is how many ports newRegion takes from its slice.
const regionPortCount = 6

func newRegion(name, stateDir, toolsBin string, env []string, ports []int, logf func(string, ...any)) *region {
	return &region{
		name:     name,
		dir:      filepath.Join(stateDir, "regions", name),
		logDir:   filepath.Join(stateDir, "logs"),
		toolsBin: toolsBin,
		env:      env,
		nodeName: "kwok-" + name,
		logf:     logf,
		server:   "https://" + hostPort(ports[2]),

		etcdPort: ports[0], etcdPeerPort: ports[1], apiPort: ports[2], kcmPort: ports[3], schedPort: ports[4],
		kwokPort: ports[5],
	}
}

// auditPolicy logs who made each write (the user, and the user it
// impersonated), with no bodies: tests read it to see who a worker wrote
// as. The control plane's own components and its chatter (leases, events)
// are left out.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-controller-manager, system:kube-scheduler, system:apiserver]
- level: None
  userGroups: [system:nodes]
- level: None
  resources:
  - {group: coordination.k8s.io, resources: [leases]}
  - {group: "", resources: [events]}
  - {group: events.k8s.io}
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// auditLog is the file of the region's kube-apiserver audit log: one JSON
// event per write, as auditPolicy says.
func (r *region) auditLog() string { return filepath.Join(r.logDir, r.procName("audit")+".log") }

func (r *region) bin(name string) string { return filepath.Join(r.toolsBin, name) }

func (r *region) procName(component string) string { return r.name + "-" + component }

// start brings the region up and returns once the fake Node is Ready and the
// default ServiceAccount exists. On error the caller stops the region.
func (r *region) start(ctx context.Context) error {
	began := time.Now()
	if err := os.MkdirAll(filepath.Join(r.dir, "etcd"), 0o700); err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}
	var err error
	if r.pki, err = writeRegionPKI(r.dir, r.name); err != nil {
		return err
	}
	r.kubeconfig = filepath.Join(r.dir, "kubeconfig")
	if err := writeKubeconfig(r.kubeconfig, []*region{r}); err != nil {
		return err
	}
	kwokConfig := filepath.Join(r.dir, "kwok.yaml")
	if err := writeKwokConfig(kwokConfig, filepath.Join(r.toolsBin, "kwok-stage"), filepath.Join(r.dir, "pod.log")); err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}

	if err := r.startEtcd(ctx); err != nil {
		return err
	}
	r.logf("region %s: etcd ready after %s", r.name, since(began))
	if err := r.startAPIServer(ctx); err != nil {
		return err
	}
	r.logf("region %s: kube-apiserver ready after %s", r.name, since(began))

	cs, err := kubernetes.NewForConfig(r.restConfig())
	if err != nil {
		return fmt.Errorf("region %s: client: %w", r.name, err)
	}
	if err := r.createNode(ctx, cs); err != nil {
		return err
	}
	if err := r.runControllers(ctx, cs); err != nil {
		return err
	}
	r.logf("region %s: ready after %s (%s)", r.name, since(began), r.server)
	return nil
}

// runControllers starts kube-controller-manager, kube-scheduler and kwok,
// and returns once they are ready, the fake Node is Ready and the default
// ServiceAccount exists.
func (r *region) runControllers(ctx context.Context, cs kubernetes.Interface) error {
	if err := r.startControllers(filepath.Join(r.dir, "kwok.yaml")); err != nil {
		return err
	}
	if err := r.kcm.waitReady(ctx, r.what("kube-controller-manager"), regionTimeout, r.healthz(r.kcmPort)); err != nil {
		return err
	}
	if err := r.scheduler.waitReady(ctx, r.what("kube-scheduler"), regionTimeout, r.healthz(r.schedPort)); err != nil {
		return err
	}
	if err := r.kw.waitReady(ctx, r.what("kwok (Node "+r.nodeName+" Ready)"), regionTimeout, func(ctx context.Context) error {
		return nodeReady(ctx, cs, r.nodeName)
	}); err != nil {
		return err
	}
	if err := r.kcm.waitReady(ctx, r.what("kube-controller-manager (ServiceAccount default/default)"), regionTimeout, func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	return nil
}

func (r *region) what(component string) string {
	return component + " for region " + r.name
}

func (r *region) startEtcd(ctx context.Context) error {
	client := "http://" + hostPort(r.etcdPort)
	peer := "http://" + hostPort(r.etcdPeerPort)
	p, err := startProc(r.procName("etcd"), r.logDir, r.dir, r.env, r.bin("etcd"),
		"--name="+r.name,
		"--data-dir="+filepath.Join(r.dir, "etcd"),
		"--listen-client-urls="+client,
		"--advertise-client-urls="+client,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster="+r.name+"="+peer,
		"--log-level=warn",
		// A dev cluster is thrown away with its data; fsync would only make
		// every write wait for a disk shared by several engineers.
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=2147483648",
	)
	if err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}
	r.set(&r.etcd, p)
	httpc := &http.Client{Timeout: 2 * time.Second}
	return p.waitReady(ctx, r.what("etcd"), etcdTimeout, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var health struct {
			Health string `json:"health"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
			return err
		}
		if health.Health != "true" {
			return fmt.Errorf("etcd /health says %q", health.Health)
		}
		return nil
	})
}

func (r *region) startAPIServer(ctx context.Context) error {
	const issuer = "https://kubernetes.default.svc.cluster.local"
	policy := filepath.Join(r.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return fmt.Errorf("region %s: audit policy: %w", r.name, err)
	}
	p, err := startProc(r.procName("apiserver"), r.logDir, r.dir, r.env, r.bin("kube-apiserver"),
		"--etcd-servers=http://"+hostPort(r.etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(r.apiPort),
		"--tls-cert-file="+r.pki.certFile,
		"--tls-private-key-file="+r.pki.keyFile,
		"--token-auth-file="+r.pki.tokenFile,
		// Also publishes kube-system/extension-apiserver-authentication,
		// which the controller manager and scheduler read at start.
		"--client-ca-file="+r.pki.caFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer="+issuer,
		"--api-audiences="+issuer,
		"--service-account-key-file="+r.pki.saPubFile,
		"--service-account-signing-key-file="+r.pki.saKeyFile,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		// The kubernetes Service cannot have a loopback endpoint; without
		// this the apiserver logs an error every few seconds.
		"--endpoint-reconciler-type=none",
		// Pod logs come from kwok's server on the Node's InternalIP.
		"--kubelet-preferred-address-types=InternalIP",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--event-ttl=1h",
		"--audit-policy-file="+policy,
		"--audit-log-path="+r.auditLog(),
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=1",
	)
	if err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}
	r.set(&r.apiserver, p)
	rc, err := kubernetes.NewForConfig(r.restConfig())
	if err != nil {
		return fmt.Errorf("region %s: client: %w", r.name, err)
	}
	return p.waitReady(ctx, r.what("kube-apiserver"), apiserverTimeout, func(ctx context.Context) error {
		_, err := rc.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// startControllers starts kube-controller-manager, kube-scheduler and kwok;
// the caller waits for each.
func (r *region) startControllers(kwokConfig string) error {
	if err := r.startControllerManager(); err != nil {
		return err
	}
	common := r.controllerFlags()
	sched, err := startProc(r.procName("scheduler"), r.logDir, r.dir, r.env, r.bin("kube-scheduler"),
		append(common, "--secure-port="+strconv.Itoa(r.schedPort))...)
	if err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}
	r.set(&r.scheduler, sched)
	kw, err := startProc(r.procName("kwok"), r.logDir, r.dir, r.env, r.bin("kwok"),
		"--kubeconfig="+r.kubeconfig,
		"--config="+kwokConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+fakeNodeAnnotation+"=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.0.0.0/16", // room for hundreds of pods
		// The fake kubelet's server, which the API server asks for pod
		// logs (kubectl logs); its certificate is kwok's own, which the
		// API server, given no --kubelet-certificate-authority, takes.
		"--server-address="+hostPort(r.kwokPort),
		"--node-ip=127.0.0.1",
		"--node-port="+strconv.Itoa(r.kwokPort),
	)
	if err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}
	r.set(&r.kw, kw)
	return nil
}

// healthz checks a component's /healthz, served with the region's cert.
func (r *region) healthz(port int) func(context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.pki.caPEM)
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}
	url := "https://" + hostPort(port) + "/healthz"
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

func (r *region) set(slot **proc, p *proc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*slot = p
}

// procs lists the region's running processes in stop order.
func (r *region) procs() [][]*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return [][]*proc{{r.kw, r.kcm, r.scheduler}, {r.apiserver}, {r.etcd}}
}

// stop stops the region: controllers first, then kube-apiserver (it hangs in
// its graceful shutdown once etcd is gone), then etcd.
func (r *region) stop() error {
	var errs []error
	for _, group := range r.procs() {
		errs = append(errs, stopAll(group, stopGrace))
	}
	return errors.Join(errs...)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }

// controllerFlags are the flags kube-controller-manager and kube-scheduler
// share.
func (r *region) controllerFlags() []string {
	return []string{
		"--kubeconfig=" + r.kubeconfig,
		"--authentication-kubeconfig=" + r.kubeconfig,
		"--authorization-kubeconfig=" + r.kubeconfig,
		// Requests to their ports are /healthz (always allowed) or carry a
		// token; the front-proxy CA they would look up is not configured.
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--tls-cert-file=" + r.pki.certFile,
		"--tls-private-key-file=" + r.pki.keyFile,
		"--leader-elect=false",
	}
}

// startControllerManager starts kube-controller-manager: namespaces,
// service accounts, garbage collection of owned objects.
func (r *region) startControllerManager() error {
	kcm, err := startProc(r.procName("controller-manager"), r.logDir, r.dir, r.env, r.bin("kube-controller-manager"),
		append(r.controllerFlags(),
			"--secure-port="+strconv.Itoa(r.kcmPort),
			"--cluster-name="+r.name,
			"--controllers=*",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file="+r.pki.saKeyFile,
			"--root-ca-file="+r.pki.caFile,
			"--kube-api-qps=100",
			"--kube-api-burst=200",
		)...)
	if err != nil {
		return fmt.Errorf("region %s: %w", r.name, err)
	}
	r.set(&r.kcm, kcm)
	return nil
}
