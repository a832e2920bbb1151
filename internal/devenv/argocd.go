package devenv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Argo CD on the stack: the peer `make bench` measures Ferry against, and
// the installation the takeover tests take over. It is built from its Go
// module by `hack/tools.sh argocd` (one binary that runs as the command its
// name says) and runs as Argo CD's own install runs it, but as processes on
// loopback: its application controller and repo server, against the
// stack's Redis (its own database) and Git server, with the helm and
// kustomize CLIs of the tools bin dir.
//
// Its home is a region, not the control cluster: there Ferry's own
// controller owns the argoproj.io kinds (its CRDs are deploy/crds). Argo
// CD's CRDs and its namespace, ArgoCDNamespace, are in the first region;
// every region, that one too, is an Argo CD cluster Secret named after
// the region, with its server URL and admin token.
const (
	// ArgoCDNamespace is Argo CD's namespace in its home region.
	ArgoCDNamespace = "argocd"
	// argoCDRedisDB keeps Argo CD's cache apart from Ferry's keys.
	argoCDRedisDB = 1
	argoCDTimeout = 2 * time.Minute
)

// The commands of the Argo CD binary the stack runs (hack/tools.sh links
// each name to it).
const (
	argoCDController = "argocd-application-controller"
	argoCDRepoServer = "argocd-repo-server"
	argoCDServer     = "argocd-server"
	argoCDAppSets    = "argocd-applicationset-controller"
)

// ArgoCDOptions configure StartArgoCD.
type ArgoCDOptions struct {
	// Resync is the controller's --app-resync: how often every app is
	// compared with Git without a change, plus up to a tenth of it as
	// jitter (--app-resync-jitter), as Ferry's poll. Zero: Argo CD's
	// defaults, 120 s plus up to 60 s.
	Resync time.Duration
	// Name tells the logs of one run from another's ("argocd" when empty).
	Name string
	// LogDir holds the logs, NAME-*.log (the stack's log dir when empty).
	LogDir string
	// PersistResourceHealth keeps each resource's health in the
	// Application's status.resources (--persist-resource-health), as
	// Argo CD 2 did and its API server shows it; Argo CD 3 keeps it in
	// Redis alone by default. Tests that read the object want it.
	PersistResourceHealth bool
	// Server runs its API server too, plain HTTP on loopback, for its
	// webhook (POST /api/webhook), whose GitHub deliveries are signed
	// with WebhookSecret (argocd-secret's webhook.github.secret).
	Server        bool
	WebhookSecret string
	// AppSets runs its ApplicationSet controller too.
	AppSets bool
}

// ArgoCD is a running Argo CD.
type ArgoCD struct {
	// Home is the region whose ArgoCDNamespace holds its objects.
	Home string
	// Version is the release that runs (from the tools cache's dir name).
	Version string
	// Kubeconfig is its kubeconfig: one context, Home's admin.
	Kubeconfig string
	// ControllerMetrics is the application controller's metrics address
	// (host:port; /metrics).
	ControllerMetrics string
	// ServerAddr is its API server's address (host:port, plain HTTP), when
	// ArgoCDOptions.Server runs one.
	ServerAddr string

	repo, controller, server, appSets *proc
	ports                             *portReservation
}

// ArgoCDBuilt says why Argo CD cannot run from toolsBin, or nil when it can.
func ArgoCDBuilt(toolsBin string) error {
	for _, name := range []string{argoCDController, argoCDRepoServer, argoCDServer, argoCDAppSets, "argocd-crds"} {
		if _, err := os.Stat(filepath.Join(toolsBin, name)); err != nil {
			return fmt.Errorf("Argo CD is not built (no %s in %s): hack/tools.sh argocd builds it", name, toolsBin)
		}
	}
	return nil
}

// StartArgoCD installs Argo CD into the stack's first region and starts it;
// it stops with Stop (not with the stack: stop it first).
func (s *Stack) StartArgoCD(ctx context.Context, opts ArgoCDOptions) (a *ArgoCD, err error) {
	if err := ArgoCDBuilt(s.ToolsBin); err != nil {
		return nil, err
	}
	if len(s.regionOrder) == 0 {
		return nil, errors.New("argo cd: the stack has no region to run in")
	}
	name := opts.Name
	if name == "" {
		name = "argocd"
	}
	home := s.regionOrder[0]
	a = &ArgoCD{Home: home.name, Version: builtVersion(s.ToolsBin, argoCDController)}
	defer func() {
		if err != nil {
			a.Stop()
		}
	}()
	dir, err := os.MkdirTemp(s.StateDir, name+"-")
	if err != nil {
		return a, err
	}
	a.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeContextKubeconfig(a.Kubeconfig, home); err != nil {
		return a, err
	}
	if err := s.installArgoCD(ctx, home, opts.WebhookSecret); err != nil {
		return a, fmt.Errorf("argo cd: %w", err)
	}
	ports, reservation, err := freePorts(8)
	if err != nil {
		return a, err
	}
	a.ports = reservation
	repoPort, repoMetrics, controllerMetrics, serverPort, serverMetrics := ports[0], ports[1], ports[2], ports[3], ports[4]
	appSetsMetrics, appSetsProbe, appSetsWebhook := ports[5], ports[6], ports[7]
	a.ControllerMetrics = hostPort(controllerMetrics)
	env := append(os.Environ(), "PATH="+s.ToolsBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+dir, "TMPDIR="+dir, "KUBECONFIG="+a.Kubeconfig,
		"ARGOCD_FAKE_IN_CLUSTER=true", "ARGOCD_GPG_ENABLED=false")
	logDir := cmp.Or(opts.LogDir, s.LogDir)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return a, err
	}
	redis := []string{"--redis", s.RedisAddr, "--redisdb", strconv.Itoa(argoCDRedisDB), "--loglevel", "info"}

	a.repo, err = startProc(name+"-repo-server", logDir, dir, env, filepath.Join(s.ToolsBin, argoCDRepoServer),
		append([]string{"--port", strconv.Itoa(repoPort), "--metrics-port", strconv.Itoa(repoMetrics), "--disable-tls", "--client-ca-path="}, redis...)...)
	if err != nil {
		return a, err
	}
	if err := a.repo.waitReady(ctx, "argo cd repo server", argoCDTimeout, healthz(repoMetrics)); err != nil {
		return a, err
	}
	args := []string{"--namespace", ArgoCDNamespace, "--repo-server", hostPort(repoPort), "--repo-server-plaintext",
		"--metrics-port", strconv.Itoa(controllerMetrics)}
	if opts.PersistResourceHealth {
		args = append(args, "--persist-resource-health")
	}
	if opts.Resync > 0 {
		args = append(args, "--app-resync", strconv.Itoa(int(opts.Resync.Seconds())),
			"--app-resync-jitter", strconv.Itoa(int(opts.Resync.Seconds()/10)))
	}
	a.controller, err = startProc(name+"-application-controller", logDir, dir, env, filepath.Join(s.ToolsBin, argoCDController),
		append(args, redis...)...)
	if err != nil {
		return a, err
	}
	if err := a.controller.waitReady(ctx, "argo cd application controller", argoCDTimeout, healthz(controllerMetrics)); err != nil {
		return a, err
	}
	if opts.Server {
		// No UI (its static files are not built), no Dex, no TLS.
		a.server, err = startProc(name+"-server", logDir, dir, env, filepath.Join(s.ToolsBin, argoCDServer),
			append([]string{"--insecure", "--address", "127.0.0.1", "--port", strconv.Itoa(serverPort), "--metrics-port", strconv.Itoa(serverMetrics),
				"--repo-server", hostPort(repoPort), "--repo-server-plaintext", "--dex-server", "", "--staticassets", dir, "--namespace", ArgoCDNamespace}, redis...)...)
		if err != nil {
			return a, err
		}
		if err := a.server.waitReady(ctx, "argo cd api server", argoCDTimeout, healthz(serverPort)); err != nil {
			return a, err
		}
		a.ServerAddr = hostPort(serverPort)
	}
	if opts.AppSets {
		a.appSets, err = startProc(name+"-applicationset-controller", logDir, dir, env, filepath.Join(s.ToolsBin, argoCDAppSets),
			"--namespace", ArgoCDNamespace, "--metrics-addr", hostPort(appSetsMetrics), "--probe-addr", hostPort(appSetsProbe),
			"--webhook-addr", hostPort(appSetsWebhook), "--argocd-repo-server", hostPort(repoPort), "--repo-server-plaintext",
			"--logformat", "text", "--loglevel", "info")
		if err != nil {
			return a, err
		}
		// Its manager serves metrics once started (its probes have no checks).
		if err := a.appSets.waitReady(ctx, "argo cd applicationset controller", argoCDTimeout, getOK(appSetsMetrics, "/metrics")); err != nil {
			return a, err
		}
	}
	s.logf("argo cd %s: running in %s/%s (logs %s-*.log)", a.Version, home.name, ArgoCDNamespace, name)
	return a, nil
}

// Stop stops the controller, then the repo server. It may be called more
// than once.
func (a *ArgoCD) Stop() error {
	var errs []error
	for _, p := range []*proc{a.appSets, a.server, a.controller, a.repo} {
		if p != nil {
			errs = append(errs, p.stop(stopGrace))
		}
	}
	if a.ports != nil {
		errs = append(errs, a.ports.release())
	}
	return errors.Join(errs...)
}

// Pids are the processes of Argo CD by name, for CPU and memory figures.
func (a *ArgoCD) Pids() map[string]int {
	out := map[string]int{}
	for _, p := range []*proc{a.controller, a.repo, a.server, a.appSets} {
		if p != nil {
			out[p.name] = p.pid()
		}
	}
	return out
}

// Logs names the log files of Argo CD's processes (in its log dir).
func (a *ArgoCD) Logs() []string {
	var out []string
	for _, p := range []*proc{a.controller, a.repo, a.server, a.appSets} {
		if p != nil {
			out = append(out, filepath.Base(p.logPath))
		}
	}
	return out
}

// Exited says which part of Argo CD has died, or nil.
func (a *ArgoCD) Exited() error {
	var errs []error
	for _, p := range []*proc{a.controller, a.repo, a.server, a.appSets} {
		if p == nil {
			continue
		}
		if done, err := p.exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v): see %s", p.name, err, p.logPath))
		}
	}
	return errors.Join(errs...)
}

// healthz checks an Argo CD process's /healthz on its metrics port.
func healthz(port int) func(context.Context) error { return getOK(port, "/healthz") }

// getOK checks that GET path on loopback's port answers 200.
func getOK(port int, path string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostPort(port)+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %s", path, resp.Status)
		}
		return nil
	}
}

// writeContextKubeconfig writes a kubeconfig of one context: r's admin.
func writeContextKubeconfig(path string, r *region) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[r.name] = &clientcmdapi.Cluster{Server: r.server, CertificateAuthorityData: r.pki.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: r.pki.adminToken}
	cfg.Contexts[r.name] = &clientcmdapi.Context{Cluster: r.name, AuthInfo: "admin", Namespace: ArgoCDNamespace}
	cfg.CurrentContext = r.name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

var releaseVersion = regexp.MustCompile(`v[0-9]+\.[0-9]+\.[0-9]+`)

// builtVersion is the release of a tool from the cache dir the tools bin
// dir links it into (hack/tools.sh keys them by version).
func builtVersion(toolsBin, name string) string {
	real, err := filepath.EvalSymlinks(filepath.Join(toolsBin, name))
	if err != nil {
		return "unknown"
	}
	if v := releaseVersion.FindString(filepath.Base(filepath.Dir(real))); v != "" {
		return v
	}
	return "unknown"
}
