package bench

// Flux is the peer the push, apply and peer-idle scenarios measure Ferry
// against: Flux's source-controller and kustomize-controller, built from
// their releases by `hack/tools.sh flux` (make bench runs it), running as
// processes against one region of the same stack, as they would run in
// that cluster: every namespace watched, no leader election, storage and
// probes on loopback ports. flux_objects.go writes and reads their
// objects.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fluxNamespace holds the GitRepositories and Kustomizations, as
// flux-system does in a cluster that Flux bootstrapped.
const fluxNamespace = "flux-system"

// The names of Flux's parts in the tools dir (hack/tools.sh links them).
const (
	fluxSourceBin    = "source-controller"
	fluxKustomizeBin = "kustomize-controller"
)

var fluxCRDDirs = []string{"flux-source-crds", "flux-kustomize-crds"}

// Flux is source-controller and kustomize-controller running against one
// region.
type Flux struct {
	Region string
	// Versions names the two releases, for the report.
	Versions string
	// Limits describes kustomize-controller's client-side rate limit.
	Limits string

	dyn       dynamic.Interface
	kube      kubernetes.Interface
	source    *fluxProc
	kustomize *fluxProc
}

// fluxProc is one controller process.
type fluxProc struct {
	name        string
	cmd         *exec.Cmd
	done        chan struct{}
	log         string
	metricsAddr string
	healthAddr  string
}

// fluxBuilt says why Flux cannot run from the tools dir, or nil when it can.
func fluxBuilt(toolsBin string) error {
	for _, name := range append([]string{fluxSourceBin, fluxKustomizeBin}, fluxCRDDirs...) {
		if _, err := os.Stat(filepath.Join(toolsBin, name)); err != nil {
			return fmt.Errorf("Flux is not built (no %s in %s): make bench builds it with hack/tools.sh flux", name, toolsBin)
		}
	}
	return nil
}

// StartFlux installs Flux's CRDs into the stack's first region and starts
// both controllers; they stop when Stop is called, or with the stack.
// name tells the logs of one scenario from another's.
func (e *Env) StartFlux(ctx context.Context, name string) (*Flux, error) {
	toolsBin := e.Stack.ToolsBin
	if err := fluxBuilt(toolsBin); err != nil {
		return nil, err
	}
	region := e.Stack.Regions[0]
	rc, err := e.Stack.RestConfig(region)
	if err != nil {
		return nil, err
	}
	f := &Flux{Region: region, Versions: fluxVersions(toolsBin), Limits: fluxLimits(e.Cfg.FluxKustomizeArgs)}
	if f.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, err
	}
	if f.kube, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, err
	}
	for _, dir := range fluxCRDDirs {
		if err := f.installCRDs(ctx, filepath.Join(toolsBin, dir)); err != nil {
			return nil, err
		}
	}
	if err := f.ensureNamespace(ctx, fluxNamespace); err != nil {
		return nil, err
	}

	dir, err := e.tempDir("flux-" + name)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeRegionKubeconfig(kubeconfig, region, rc.Host, rc.BearerToken, rc.CAData); err != nil {
		return nil, err
	}
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return nil, err
	}
	storageAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"KUBECONFIG=" + kubeconfig, "RUNTIME_NAMESPACE=" + fluxNamespace}
	logDir := filepath.Join(e.Cfg.Out, "logs")

	// kustomize-controller downloads artifacts from the URL that
	// source-controller advertises: its storage server on loopback.
	f.source, err = startFluxProc(filepath.Join(toolsBin, fluxSourceBin), "flux-"+name+"-source-controller", logDir, env,
		"--storage-path", storage, "--storage-addr", storageAddr, "--storage-adv-addr", storageAddr)
	if err != nil {
		return nil, err
	}
	e.cleanups = append(e.cleanups, f.Stop)
	f.kustomize, err = startFluxProc(filepath.Join(toolsBin, fluxKustomizeBin), "flux-"+name+"-kustomize-controller", logDir, env, e.Cfg.FluxKustomizeArgs...)
	if err != nil {
		f.Stop()
		return nil, err
	}
	for _, p := range []*fluxProc{f.source, f.kustomize} {
		if err := p.waitReady(ctx, time.Minute); err != nil {
			f.Stop()
			return nil, err
		}
	}
	e.logf("flux: %s running against %s", f.Versions, region)
	return f, nil
}

// startFluxProc starts a controller with what every benchmark run shares:
// leader election off, every namespace watched, metrics and probes on free
// loopback ports, JSON logs into logDir/<name>.log.
func startFluxProc(bin, name, logDir string, env []string, extra ...string) (*fluxProc, error) {
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	p := &fluxProc{name: name, log: filepath.Join(logDir, name+".log"), metricsAddr: metrics, healthAddr: health, done: make(chan struct{})}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	args := append([]string{"--enable-leader-election=false", "--watch-all-namespaces=true",
		"--metrics-addr", metrics, "--health-addr", health, "--log-level", "info"}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady waits for the controller's /readyz.
func (p *fluxProc) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get("http://" + p.healthAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := p.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: see %s", p.name, limit, p.log)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *fluxProc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v): see %s", p.name, p.cmd.ProcessState, p.log)
	default:
		return nil
	}
}

func (p *fluxProc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM, then SIGKILL to the group after 15 s.
func (p *fluxProc) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Stop stops kustomize-controller, then source-controller. It may be
// called more than once.
func (f *Flux) Stop() {
	f.kustomize.stop()
	f.source.stop()
}

// Exited reports whether a controller has died.
func (f *Flux) Exited() error {
	return errors.Join(f.source.exited(), f.kustomize.exited())
}

// Logs names the controllers' log files, for the report.
func (f *Flux) Logs() string {
	return fmt.Sprintf("`logs/%s` and `logs/%s`", filepath.Base(f.source.log), filepath.Base(f.kustomize.log))
}

func (f *Flux) ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := f.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s in %s: %w", name, f.Region, err)
	}
	return nil
}

// writeRegionKubeconfig writes a kubeconfig of one context: the region's
// admin, which is what the controllers run as.
func writeRegionKubeconfig(path, region, server, token string, ca []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[region] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[region] = &clientcmdapi.Context{Cluster: region, AuthInfo: "admin"}
	cfg.CurrentContext = region
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write Flux's kubeconfig: %w", err)
	}
	return nil
}

// fluxVersions names the releases from the cache dirs the tools dir links
// into (hack/tools.sh keys them by version).
func fluxVersions(toolsBin string) string {
	name := func(bin string) string {
		real, err := filepath.EvalSymlinks(filepath.Join(toolsBin, bin))
		if v := semver.FindString(filepath.Base(filepath.Dir(real))); err == nil && v != "" {
			return bin + " " + v
		}
		return bin
	}
	return name(fluxSourceBin) + " and " + name(fluxKustomizeBin)
}

var semver = regexp.MustCompile(`v[0-9]+\.[0-9]+\.[0-9]+`)

// fluxLimits describes kustomize-controller's client-side rate limit: its
// defaults (fluxcd/pkg/runtime/client), unless args set them.
func fluxLimits(args []string) string {
	return say(stackText{FluxArgs: args}, "flux-limits")
}
