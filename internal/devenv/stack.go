package devenv

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"
)

// DefaultRegions are the regions of a stack when Options.Regions is nil.
var DefaultRegions = []string{"us-east-1", "eu-west-1", "ap-south-1"}

// Options configure Start.
type Options struct {
	// Regions get one control plane each. nil means DefaultRegions; an empty,
	// non-nil slice means none (Temporal, Redis and Git only).
	Regions []string
	// StateDir holds data, logs, kubeconfig and env. Empty: a new temporary
	// dir, removed by Stop. A reused dir is wiped except its git/ repos.
	StateDir string
	// ToolsBin holds temporal, etcd, kube-*, kwok and kwok-stage/. Empty:
	// $FERRY_TOOLS_BIN, else what hack/tools.sh prints (it builds them once).
	ToolsBin string
	// Temporal chooses the Temporal server: TemporalDev (also when empty) or
	// TemporalCluster.
	Temporal TemporalMode
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// HelmRepoUsername and HelmRepoPassword, when set, make the Helm
	// repository ask for them (basic auth).
	HelmRepoUsername, HelmRepoPassword string
	// Control runs one more API server, the control cluster (control.go):
	// context ControlContext of the kubeconfig, namespace ControlNamespace,
	// with the CRDs of Argo CD's kinds.
	Control bool
}

// TemporalMode is how a stack runs Temporal.
type TemporalMode string

const (
	// TemporalDev is the CLI's single-process dev server on SQLite.
	TemporalDev TemporalMode = "dev"
	// TemporalCluster is the server's services as separate processes on
	// PostgreSQL, as a production deployment runs them.
	TemporalCluster TemporalMode = "cluster"
)

// temporalService is the Temporal of a stack, in either mode.
type temporalService interface {
	address() string
	uiURL() string
	// start starts it, or starts it again after stop on the same data.
	start(ctx context.Context) error
	stop() error
	procs() []*proc
}

// Stack is a running local stack. Its exported fields are what clients need.
type Stack struct {
	StateDir        string
	ToolsBin        string
	Temporal        TemporalMode
	TemporalAddress string // host:port of the frontend
	TemporalUIURL   string
	Namespace       string // Temporal namespace: "default"
	Regions         []string
	Kubeconfig      string // DIR/kubeconfig: one context per region, named after it, and the control cluster's
	// ControlContext and ControlNamespace: where the control cluster keeps
	// Applications (Options.Control); empty without one.
	ControlContext, ControlNamespace string
	// RegionsConfig is DIR/regions.yaml, the workers' --regions-config:
	// each region's server URL and labels, the first the in-cluster one;
	// empty when the stack has no regions.
	RegionsConfig                      string
	RedisAddr                          string
	CacheKey                           string // FERRY_CACHE_KEY of the workers sharing RedisAddr: random per stack
	GitURL                             string // GitURL+"/<name>.git" serves DIR/git/<name>.git
	HelmRepoURL                        string // a Helm chart repository serving DIR/helm (PublishChart)
	HelmRepoUsername, HelmRepoPassword string // its basic auth, when set
	OCIRegistry                        string // host:port of an OCI registry (plain HTTP): charts under oci://OCIRegistry/charts/<name>
	LogDir                             string // DIR/logs: one <name>.log per process
	StartDuration                      time.Duration

	// ServerListen is a loopback host:port kept for ferry-server
	// (FERRY_SERVER_LISTEN): the stack does not listen on it.
	ServerListen string
	// OIDCIssuer etc. are the stack's Dex and ferry-server's client there
	// (dex.go); empty when the tools bin dir has no dex.
	OIDCIssuer, OIDCClientID, OIDCClientSecret string
	OIDCRedirectURIs                           []string
	// SMTPAddr (host:port) and MailpitURL are the stack's SMTP server and
	// its HTTP API (mailpit.go); empty when the tools bin dir has no mailpit.
	SMTPAddr, MailpitURL string

	log         io.Writer
	tempDir     bool     // StateDir was made by Start: Stop removes it
	lock        *os.File // held while the stack runs
	regions     map[string]*region
	regionOrder []*region
	control     *region // nil without Options.Control
	temporal    temporalService
	redis       *proc
	git         *gitServer
	helm        *helmRepo
	registry    *proc
	dex         *proc
	mailpit     *proc

	ports   *portReservation
	mu      sync.Mutex // serializes Stop and RestartTemporal
	stopped bool
	stopErr error
}

// regionName is what a region may be called: it names a kube context, a
// Node, files and a task queue.
var regionName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$`)

// Start runs the stack and returns once every part is ready. On error it
// stops whatever it had started.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	began := time.Now()
	regions := opts.Regions
	if regions == nil {
		regions = DefaultRegions
	}
	seen := map[string]bool{}
	for _, r := range regions {
		if !regionName.MatchString(r) || seen[r] {
			return nil, fmt.Errorf("region %q: want distinct lowercase names of letters, digits and '-' (like us-east-1)", r)
		}
		seen[r] = true
	}
	if opts.Control && seen[ControlContext] {
		return nil, fmt.Errorf("region %q: the control cluster's kube context has that name; call the region something else", ControlContext)
	}
	mode := opts.Temporal
	if mode == "" {
		mode = TemporalDev
	}
	if mode != TemporalDev && mode != TemporalCluster {
		return nil, fmt.Errorf("temporal %q: want %q (the dev server) or %q (a cluster on PostgreSQL)", mode, TemporalDev, TemporalCluster)
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	toolsBin, err := resolveToolsBin(ctx, opts.ToolsBin, log)
	if err != nil {
		return nil, err
	}

	s = &Stack{
		Temporal:  mode,
		ToolsBin:  toolsBin,
		Namespace: "default",
		Regions:   slices.Clone(regions),
		log:       log,
		regions:   map[string]*region{},
	}
	if opts.StateDir == "" {
		sweepAbandonedTempDirs()
		if s.StateDir, err = os.MkdirTemp("", tempDirPrefix); err != nil {
			return nil, fmt.Errorf("create a state dir: %w", err)
		}
		s.tempDir = true
	} else if s.StateDir, err = filepath.Abs(opts.StateDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
			s = nil
		}
	}()
	if s.lock, err = prepareStateDir(s.StateDir); err != nil {
		return s, err
	}
	s.LogDir = filepath.Join(s.StateDir, "logs")
	s.Kubeconfig = filepath.Join(s.StateDir, "kubeconfig")
	s.logf("state dir %s, tools %s", s.StateDir, s.ToolsBin)

	temporalPorts := temporalPortCount
	if mode == TemporalCluster {
		temporalPorts = clusterPortCount
	}
	clusters := len(regions)
	if opts.Control {
		clusters++
	}
	ports, reservation, err := freePorts(clusters*regionPortCount + temporalPorts + 6)
	if err != nil {
		return s, err
	}
	s.ports = reservation
	env := append(os.Environ(), "PATH="+toolsBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for i, name := range regions {
		r := newRegion(name, s.StateDir, toolsBin, env, ports[i*regionPortCount:(i+1)*regionPortCount], s.logf)
		s.regions[name] = r
		s.regionOrder = append(s.regionOrder, r)
	}
	ports = ports[len(regions)*regionPortCount:]
	if opts.Control {
		s.control = newControl(s.StateDir, toolsBin, env, ports[:regionPortCount], s.logf)
		s.ControlContext, s.ControlNamespace = ControlContext, ControlNamespace
		ports = ports[regionPortCount:]
	}
	if mode == TemporalCluster {
		c, err := newTemporalCluster(toolsBin, s.StateDir, env, ports[:temporalPorts], s.logf)
		if err != nil {
			return s, err
		}
		s.temporal = c
	} else {
		s.temporal = newTemporalServer(toolsBin, s.StateDir, env, ports[:temporalPorts])
	}
	s.TemporalAddress = s.temporal.address()
	s.TemporalUIURL = s.temporal.uiURL()
	redisPort := ports[temporalPorts]
	s.RedisAddr = hostPort(redisPort)
	registryPort := ports[temporalPorts+1]
	s.OCIRegistry = hostPort(registryPort)
	s.ServerListen = hostPort(ports[temporalPorts+2])
	dexPort := ports[temporalPorts+3]
	smtpPort, mailpitPort := ports[temporalPorts+4], ports[temporalPorts+5]
	s.CacheKey = rand.Text()

	if s.git, err = startGitServer(s.StateDir); err != nil {
		return s, err
	}
	s.GitURL = s.git.url
	if s.helm, err = startHelmRepo(s.StateDir, opts.HelmRepoUsername, opts.HelmRepoPassword); err != nil {
		return s, err
	}
	s.HelmRepoURL, s.HelmRepoUsername, s.HelmRepoPassword = s.helm.url, opts.HelmRepoUsername, opts.HelmRepoPassword

	g, gctx := errgroup.WithContext(ctx)
	for _, r := range s.regionOrder {
		g.Go(func() error { return r.start(gctx) })
	}
	if s.control != nil {
		g.Go(func() error { return s.control.startControl(gctx) })
	}
	g.Go(func() error {
		t := time.Now()
		if err := s.temporal.start(gctx); err != nil {
			return err
		}
		s.logf("temporal %s: ready after %s (%s, UI %s)", s.Temporal, since(t), s.TemporalAddress, s.TemporalUIURL)
		return nil
	})
	g.Go(func() error {
		p, err := startRedis(gctx, s.StateDir, env, redisPort)
		s.mu.Lock()
		s.redis = p
		s.mu.Unlock()
		return err
	})
	g.Go(func() error {
		p, err := startRegistry(gctx, s.StateDir, toolsBin, env, registryPort)
		s.mu.Lock()
		s.registry = p
		s.mu.Unlock()
		return err
	})
	s.goStartDex(gctx, g, env, dexPort)
	s.goStartMailpit(gctx, g, env, smtpPort, mailpitPort)
	if err := g.Wait(); err != nil {
		return s, err
	}
	if err := writeKubeconfig(s.Kubeconfig, s.clusters()); err != nil {
		return s, err
	}
	if err := s.writeRegionsConfig(filepath.Join(s.StateDir, "regions.yaml")); err != nil {
		return s, err
	}
	s.StartDuration = time.Since(began)
	s.logf("stack ready in %s: regions [%s], Temporal %s, Redis %s, Git %s, Helm %s, OCI %s, OIDC %s, SMTP %s",
		s.StartDuration.Round(10*time.Millisecond), strings.Join(regions, " "), s.TemporalAddress, s.RedisAddr, s.GitURL,
		s.HelmRepoURL, s.OCIRegistry, s.OIDCIssuer, s.SMTPAddr)
	return s, nil
}

// Stop stops every process of the stack and waits for them to exit; a
// temporary state dir is removed. Calling it again returns the first result.
func (s *Stack) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.stopErr
	}
	s.stopped = true
	began := time.Now()
	var wg sync.WaitGroup
	clusters := s.clusters()
	errs := make([]error, len(clusters)+5)
	for i, r := range clusters {
		wg.Go(func() { errs[i] = r.stop() })
	}
	if s.temporal != nil {
		wg.Go(func() { errs[len(errs)-2] = s.temporal.stop() })
	}
	if s.redis != nil {
		wg.Go(func() { errs[len(errs)-1] = s.redis.stop(stopGrace) })
	}
	if s.registry != nil {
		wg.Go(func() { errs[len(errs)-3] = s.registry.stop(stopGrace) })
	}
	if s.dex != nil {
		wg.Go(func() { errs[len(errs)-4] = s.dex.stop(stopGrace) })
	}
	if s.mailpit != nil {
		wg.Go(func() { errs[len(errs)-5] = s.mailpit.stop(stopGrace) })
	}
	wg.Wait()
	if s.git != nil {
		errs = append(errs, s.git.stop())
	}
	if s.helm != nil {
		errs = append(errs, s.helm.stop())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	if s.ports != nil {
		errs = append(errs, s.ports.release())
	}
	if s.tempDir {
		errs = append(errs, os.RemoveAll(s.StateDir))
	}
	s.stopErr = errors.Join(errs...)
	if s.stopErr != nil {
		s.stopErr = fmt.Errorf("stop the dev stack: %w", s.stopErr)
	}
	s.logf("stack stopped in %s", since(began))
	return s.stopErr
}

// RestConfig is the admin client config of a region, or of the control
// cluster (ControlContext).
func (s *Stack) RestConfig(region string) (*rest.Config, error) {
	r, ok := s.regions[region]
	if s.control != nil && region == ControlContext {
		r, ok = s.control, true
	}
	if !ok {
		return nil, fmt.Errorf("no region %q in this stack (it has %s)", region, strings.Join(s.Regions, ", "))
	}
	return r.restConfig(), nil
}

// CreateRepo creates an empty bare repository DIR/git/<name>.git that
// accepts pushes, and returns its URL.
func (s *Stack) CreateRepo(name string) (cloneURL string, err error) {
	return s.git.createRepo(context.Background(), name)
}

// RestartTemporal stops Temporal and starts it again on the same data and
// ports: the dev server on its SQLite file, or every process of the cluster,
// PostgreSQL included. Workflows survive it.
func (s *Stack) RestartTemporal(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("restart Temporal: the stack is stopped")
	}
	began := time.Now()
	if err := s.temporal.stop(); err != nil {
		return fmt.Errorf("restart Temporal: %w", err)
	}
	if err := s.temporal.start(ctx); err != nil {
		return fmt.Errorf("restart Temporal: %w", err)
	}
	s.logf("temporal: restarted in %s", since(began))
	return nil
}

// clusters are the regions' control planes and the control cluster.
func (s *Stack) clusters() []*region {
	if s.control == nil {
		return s.regionOrder
	}
	return append(slices.Clone(s.regionOrder), s.control)
}

func (s *Stack) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "devenv: "+format+"\n", args...)
}
