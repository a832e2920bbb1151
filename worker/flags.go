package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/egress"
	"github.com/ferry-gitops/ferry/internal/flagenv"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/pipeline"
	"github.com/ferry-gitops/ferry/internal/regions"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// defaultOnboardConcurrency is --onboard-concurrency's default. A mass
// onboarding on two cores is bound by the CPU whether 3 or 32 apps take
// their first sync at once, and a push to a running app meanwhile is
// faster with fewer (3.1 s against 7.6 s at 5,000 apps with 4 against 32;
// bench/README.md, "A tenth run: how many new apps at once"). A first
// sync that waits (a wave's health, a hook, a retry) gives its place back
// as it starts to wait, so slow apps do not hold the gate shut.
const defaultOnboardConcurrency = 4

// config is the worker's configuration. Every flag has a FERRY_* twin in
// the environment (FERRY_TEMPORAL_ADDRESS for --temporal-address, …), read
// by applyEnv for the flags the command line does not give.
type config struct {
	temporalAddress string
	namespace       string
	control         bool
	regions         stringList
	kubeconfig      string
	kubeContext     string
	knownRegions    string
	inClusterRegion string
	regionsConfig   string
	// regionsCfg is the regions configuration of regionsConfig,
	// knownRegions and inClusterRegion, loaded by check.
	regionsCfg *regions.Config
	// clusterSecrets: read Argo CD's cluster Secrets of the control
	// namespace as regions (readsClusterSecrets).
	clusterSecrets bool
	// requireImpersonation: every write of a region goes as a project's
	// ServiceAccount (activities.Region.RequireImpersonation).
	requireImpersonation bool
	// impersonationNamespaces: where those ServiceAccounts may be
	// (activities.Region.Impersonable).
	impersonationNamespaces string
	redisAddr               string
	redis                   redisFlags
	repoCredsDir            string
	customizations          string
	notifications           notificationsFlags
	objects                 objectFlags
	repoCreds               repoCredsFlags
	cacheDir                string
	webhookAddr             string
	metricsAddr             string
	pprofAddr               string
	shutdownTimeout         time.Duration
	maxReconciles           int
	// onboardConcurrency: how many new apps take their first sync at once;
	// onboardWait: how long one waits before it asks again (workflows.Config).
	onboardConcurrency int
	onboardWait        time.Duration
	// fullCompareEvery, fullCompareInterval: how often an idle app compares
	// anyway (workflows.Config).
	fullCompareEvery    int
	fullCompareInterval time.Duration
	// repoPollInterval: how often a control worker lists each tracked
	// repository for the apps (webhook.Poller); 0: the apps poll alone.
	repoPollInterval time.Duration
	// uiURL is ferry-server's address, that the Temporal Web UI's workflow
	// details link each app to (workflows.Config.UIURL).
	uiURL  string
	tls    tlsFlags
	render renderFlags
	// tuning: the Temporal worker's pollers, slots and sticky cache.
	tuning tuning
	// checkoutMaxFile and checkoutMaxSize bound what the Git clone cache
	// checks out (gitsource.Options.MaxFileBytes, MaxCheckoutBytes).
	checkoutMaxFile bytesFlag
	checkoutMaxSize bytesFlag

	// webhookAllowUnsigned accepts deliveries of providers without a secret.
	webhookAllowUnsigned bool
}

// newFlagSet defines the worker's flags on c. A word in backquotes in a
// usage string is the flag's placeholder in the usage text; the defaults
// are the same on every machine, so that docs/reference can show the usage.
func newFlagSet(c *config, output io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ferry-worker", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage(fs)) }

	fs.StringVar(&c.temporalAddress, "temporal-address", "127.0.0.1:7233", "`HOST:PORT` of the Temporal frontend")
	fs.StringVar(&c.namespace, "namespace", "default", "the Temporal `NAMESPACE` to work in")
	fs.BoolVar(&c.control, "control", false, "serve the workflows and the Git and render activities on queues ferry and ferry-onboard (new apps' first runs)")
	fs.Var(&c.regions, "region", "serve the activities of region `NAME` on queues ferry-region-NAME and ferry-urgent-region-NAME (what someone waits for); repeatable, or comma-separated")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` with a context per region (default: $KUBECONFIG; none: the cluster the worker runs in, for one --region)")
	fs.StringVar(&c.kubeContext, "context", "", "kubeconfig `CONTEXT` of the one region (default: the region's name)")
	fs.StringVar(&c.regionsConfig, "regions-config", "",
		"YAML `FILE` of the regions apps may target: each one's name, the server URL and aliases that destination.server and destination.name may address it by, labels, annotations, and which is Argo CD's in-cluster destination (see docs/operator-manual/regions-config.md)")
	fs.StringVar(&c.knownRegions, "regions", "", "the `REGIONS` apps may target, comma-separated (with --regions-config: the same as the file's); empty accepts any")
	fs.StringVar(&c.inClusterRegion, "in-cluster-region", "", "`REGION` that Argo CD's in-cluster destination (server https://kubernetes.default.svc, or name in-cluster) maps to; empty: the only region, else the one named in-cluster, else refused")
	fs.BoolVar(&c.requireImpersonation, "require-impersonation", false,
		"fail every sync, prune, delete and hook run in the --region clusters whose project names no ServiceAccount for its destination (destinationServiceAccounts), the default project's included, rather than write as the worker itself")
	fs.StringVar(&c.impersonationNamespaces, "impersonation-namespaces", "",
		"`GLOBS` (comma-separated) of the namespaces whose ServiceAccounts the --region workers may impersonate for a project; a project naming one elsewhere fails its syncs. Empty: every namespace but kube-system, kube-public and kube-node-lease")
	fs.StringVar(&c.redisAddr, "redis-addr", "", "`HOST:PORT` of Redis, the manifest cache the workers share; empty: an in-process cache")
	fs.StringVar(&c.redis.username, "redis-username", "", "Redis ACL `USER` (empty: the default user)")
	fs.StringVar(&c.redis.password, "redis-password", "", "Redis `PASSWORD`; prefer its environment twin, which ps does not show")
	fs.BoolVar(&c.redis.tls, "redis-tls", false, "connect to Redis over TLS")
	fs.StringVar(&c.redis.ca, "redis-tls-ca", "", "PEM CA bundle `FILE` of the Redis server; empty: the system roots")
	fs.StringVar(&c.redis.cert, "redis-tls-cert", "", "PEM client certificate `FILE` for TLS to Redis")
	fs.StringVar(&c.redis.key, "redis-tls-key", "", "PEM key `FILE` of --redis-tls-cert")
	fs.StringVar(&c.repoCredsDir, "repo-creds-dir", "", "`DIR` of YAML files holding Argo CD repository Secrets (secret-type repository or repo-creds) and argocd-tls-certs-cm; empty: only the FERRY_GIT_* credential")
	fs.StringVar(&c.repoCreds.namespace, "repo-creds-namespace", "", "`NAMESPACE` of the control cluster whose Argo CD repository Secrets and argocd-tls-certs-cm are read at start, besides --repo-creds-dir")
	fs.StringVar(&c.repoCreds.context, "repo-creds-context", "", "kubeconfig `CONTEXT` of the control cluster for --repo-creds-namespace (default: the current context; without a kubeconfig, the cluster the worker runs in)")
	fs.StringVar(&c.customizations, "resource-customizations", "", "Argo CD's argocd-cm ConfigMap manifest `FILE`: its resource.customizations Lua health checks and ignoreDifferences apply in every region")
	fs.StringVar(&c.notifications.config, "notifications-config", "", "Argo CD's argocd-notifications-cm ConfigMap manifest `FILE`: the triggers, templates and services (webhook, slack, github) of the notifications apps subscribe to by annotation or that its subscriptions key selects; control workers")
	fs.StringVar(&c.notifications.secret, "notifications-secret", "", "Secret manifest `FILE` (argocd-notifications-secret) holding the values of the services' $key references, beside FERRY_NOTIFY_<KEY> in the environment")
	fs.StringVar(&c.notifications.namespace, "notifications-namespace", "", "`NAMESPACE` of the control cluster whose argocd-notifications-cm ConfigMap and argocd-notifications-secret Secret are the notifications config, watched so that an edit applies without a restart; instead of --notifications-config and --notifications-secret; control workers")
	fs.StringVar(&c.notifications.context, "notifications-context", "", "kubeconfig `CONTEXT` of the control cluster for --notifications-namespace (default: the current context; without a kubeconfig, the cluster the worker runs in)")
	fs.StringVar(&c.objects.namespace, "control-namespace", "", "`NAMESPACE` of the control cluster whose Argo CD Application objects are apps: created, changed, synced (operation), refreshed and deleted with kubectl, their status written back; control workers (one of them works at a time, by a Lease)")
	fs.StringVar(&c.objects.appNamespaces, "app-namespaces", "",
		"`GLOBS` (comma-separated; /regexp/ too) of the control cluster's other namespaces whose Application objects are apps, named namespace/name (Argo CD's application.namespaces); each app's project must list the namespace in sourceNamespaces. Empty: the --control-namespace alone")
	fs.StringVar(&c.objects.context, "control-context", "", "kubeconfig `CONTEXT` of the control cluster for --control-namespace (default: the current context; without a kubeconfig, the cluster the worker runs in)")
	fs.BoolVar(&c.clusterSecrets, "cluster-secrets", true,
		"with --control-namespace: read Argo CD's cluster Secrets there (label argocd.argoproj.io/secret-type: cluster) as regions, added, changed and removed at run time: the worker serves each one's queues ferry-region-NAME and ferry-urgent-region-NAME, and a control worker validates destinations and runs the clusters generator with them; false: the configured regions alone")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "`DIR` of the Git clone cache (default: ferry/repos in the user's cache directory)")
	c.checkoutMaxFile = bytesFlag(gitsource.DefaultMaxFileBytes)
	fs.Var(&c.checkoutMaxFile, "checkout-max-file-size", "the largest file (`SIZE`) the worker fetches or checks out of a repository, any branch or tag; refused from its header, before it is read")
	c.checkoutMaxSize = bytesFlag(gitsource.DefaultMaxCheckoutBytes)
	fs.Var(&c.checkoutMaxSize, "checkout-max-size", "the most the files of one checked-out commit may add up to (`SIZE`)")
	fs.StringVar(&c.webhookAddr, "webhook-addr", "", "`ADDR` of the Git webhook endpoint POST /api/webhook; empty: off")
	fs.BoolVar(&c.webhookAllowUnsigned, "webhook-allow-unsigned", false,
		"accept webhook deliveries of providers that have no FERRY_WEBHOOK_<PROVIDER>_SECRET; anyone who reaches the endpoint can then trigger refreshes")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "`ADDR` of /metrics and /healthz, e.g. :9090; empty: off")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "`ADDR` of Go's profiles of the worker at /debug/pprof/ (go tool pprof), e.g. 127.0.0.1:6060; empty: off. They show what the worker's code is doing: keep them on loopback")
	fs.StringVar(&c.tls.cert, "temporal-tls-cert", "", "PEM client certificate `FILE` for TLS to Temporal")
	fs.StringVar(&c.tls.key, "temporal-tls-key", "", "PEM key `FILE` of --temporal-tls-cert")
	fs.StringVar(&c.tls.ca, "temporal-tls-ca", "", "PEM CA bundle `FILE` of the Temporal server; empty: the system roots (Temporal Cloud)")
	fs.StringVar(&c.tls.serverName, "temporal-tls-server-name", "", "`NAME` to verify in the server's certificate; empty: the host of --temporal-address")
	fs.BoolVar(&c.render.allowRemoteBases, "kustomize-allow-remote-bases", false, "let kustomizations name bases in other Git repositories, which the worker fetches with its own Git credentials and limits before the render (files given as HTTP URLs stay refused)")
	fs.Var(&c.render.allowHosts, "render-allow-hosts",
		"`HOSTS` a render's fetches (Git, Helm repositories, chart archives and dependencies, OCI, remote bases) may reach though they are loopback, private, link-local, CGNAT or cloud metadata addresses, which are refused otherwise: host names, IP addresses or CIDR ranges, each optionally with :PORT, comma-separated or repeated")
	fs.StringVar(&c.render.kubeVersion, "helm-kube-version", "", "Kubernetes `VERSION` Helm charts see in .Capabilities (default: the version Ferry is built with)")
	fs.StringVar(&c.render.apiVersions, "helm-api-versions", "", "API `VERSIONS` Helm charts see beyond the built-in ones, comma-separated, e.g. monitoring.coreos.com/v1")
	fs.DurationVar(&c.render.timeout, "render-timeout", 0,
		fmt.Sprintf("the longest `DURATION` of one render (0: %s)", render.DefaultLimits().Timeout))
	fs.IntVar(&c.render.maxObjects, "render-max-objects", render.DefaultLimits().MaxObjects,
		"the most objects one source may render (`N`): each costs room in the workflow's payloads, which Temporal caps at 2 MB")
	c.render.maxSize = bytesFlag(render.DefaultLimits().MaxRenderedBytes)
	fs.Var(&c.render.maxSize, "render-max-size", "the most one source may render, as JSON (`SIZE`, e.g. 64Mi): what the manifest cache holds")
	c.render.maxArchiveSize = bytesFlag(render.DefaultLimits().MaxArchiveBytes)
	fs.Var(&c.render.maxArchiveSize, "render-max-archive-size", "the most a chart's archived subcharts (charts/*.tgz) may inflate to, all together (`SIZE`)")
	c.render.memory = pipeline.DefaultMemory
	fs.Var(&c.render.sandbox, "render-sandbox", "how renders are isolated: `MODE` gvisor (runsc), process (bwrap), pod (in the worker's process, which gVisor runs: a pod of RuntimeClass gvisor) or none (in the worker's process, for development only) (default: gvisor where runsc is on PATH, else process where bwrap is)")
	fs.Var(&c.render.memory, "render-memory", "the memory `SIZE` of one sandboxed render, e.g. 512Mi or 2Gi")
	fs.IntVar(&c.render.pool, "render-sandbox-pool", defaultSandboxPool,
		"`N` sandboxes kept started ahead of renders, refilled in the background; 0: each render starts its own")
	fs.IntVar(&c.render.reuse, "render-sandbox-reuse", defaultSandboxReuse,
		"`N`, the most renders of one checkout (one commit of a repository) a pooled sandbox serves, one after another; plugins always get a sandbox per render; 1: every render a sandbox of its own")
	fs.StringVar(&c.render.runsc, "runsc", "", "the gVisor `PATH` of runsc that --render-sandbox gvisor runs (default: runsc on PATH)")
	fs.StringVar(&c.render.runscPlatform, "runsc-platform", "", "runsc's `PLATFORM` for --render-sandbox gvisor: "+strings.Join(sandbox.Platforms, ", ")+
		" (default: systrap where the runsc offers it and it works here, else ptrace)")
	fs.StringVar(&c.render.sopsAgeKeyFile, "sops-age-key-file", "", "age identities `FILE` (age-keygen's keys.txt, as KSOPS users mount their sops-age Secret) that renders decrypt SOPS-encrypted files with, in the sandbox; empty: an encrypted file fails its render")
	fs.StringVar(&c.render.pluginDir, "plugin-dir", "", "`DIR` of config-management plugins (Argo CD's ConfigManagementPlugin files, *.yaml); its bin/ is on their PATH in the sandbox; empty: none")
	fs.Var(&c.render.pluginEgress, "plugin-egress",
		"`PLUGIN=HOSTS`: the hosts a config-management plugin may reach, through an egress proxy the worker runs for each of its renders (host names, *.domain, IP addresses, each optionally with :PORT, comma-separated); "+
			"loopback, private, link-local and metadata addresses stay refused unless --render-allow-hosts lists them; repeatable, or PLUGIN=HOSTS;PLUGIN=HOSTS. Without it a plugin reaches no network. Ferry's own: Argo CD has no such list")
	fs.IntVar(&c.maxReconciles, "max-reconciles", 0,
		fmt.Sprintf("after `N` reconciles, or N retries of a running operation, an app workflow continues as new (0: %d); keep it equal on every control worker", contract.DefaultMaxReconciles))
	fs.IntVar(&c.onboardConcurrency, "onboard-concurrency", defaultOnboardConcurrency,
		"how many new apps (`N`) take their first sync at once, the others waiting in the order they came (an onboarding gate workflow admits them); 0: no bound; the last control worker to ask sets it")
	fs.DurationVar(&c.onboardWait, "onboard-wait", contract.DefaultOnboardWait,
		"a new app waiting for its turn asks the gate again after `DURATION` and up to half as long again (spread by the app's name, so that apps applied together do not ask together), and waits once more while the gate makes progress; it onboards at once when the gate does not answer")
	fs.IntVar(&c.fullCompareEvery, "full-compare-every", contract.DefaultFullCompareEvery,
		"an idle app whose regions' live caches saw no change leaves its polls' compares out, but compares every `N`th poll anyway (1: every poll); keep it equal on every control worker")
	fs.DurationVar(&c.fullCompareInterval, "full-compare-interval", contract.DefaultFullCompareInterval,
		"and at least once per `DURATION`, whichever comes first; keep it equal on every control worker")
	fs.DurationVar(&c.repoPollInterval, "repo-poll-interval", contract.DefaultRepoPollInterval,
		"a control worker lists each Git repository the apps track once per `DURATION` (one ls-remote however many apps track it) and refreshes the apps of what moved; "+
			"an app whose poll interval is as long or longer then polls alone only every --full-compare-interval; 0: off, each app polls alone; keep it equal on every control worker")
	fs.StringVar(&c.uiURL, "ui-url", "",
		"`URL` of ferry-server's web UI (Argo CD's argocd-cm url), that each app's workflow details in the Temporal Web UI link to; empty: no link")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "the `DURATION` running activities get to finish on SIGTERM")
	c.tuning.define(fs)
	return fs
}

// parseFlags reads the command line, then the environment twins of the
// flags it does not give, and checks the result.
func parseFlags(args []string, output io.Writer) (*config, error) {
	c, _, err := parse(args, os.LookupEnv, output)
	if err != nil {
		return nil, err
	}
	return c, c.check()
}

// parse is parseFlags before the checks, with the environment read through
// lookup.
func parse(args []string, lookup func(string) (string, bool), output io.Writer) (*config, *flag.FlagSet, error) {
	c := &config{}
	fs := newFlagSet(c, output)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if err := flagenv.Apply(fs, "FERRY_", lookup); err != nil {
		return nil, nil, err
	}
	if c.kubeconfig == "" {
		c.kubeconfig, _ = lookup("KUBECONFIG")
	}
	if c.cacheDir == "" {
		c.cacheDir = defaultCacheDir()
	}
	c.regions = slices.Compact(slices.Sorted(slices.Values(c.regions)))
	return c, fs, nil
}

func (c *config) check() error {
	var errs []error
	if !c.control && len(c.regions) == 0 {
		errs = append(errs, fmt.Errorf("nothing to serve: give --control, --region NAME, or both"))
	}
	if c.kubeContext != "" && len(c.regions) > 1 {
		errs = append(errs, fmt.Errorf("--context names one context but %d regions were given: run one worker per region, or name each kubeconfig context after its region", len(c.regions)))
	}
	if c.kubeconfig == "" && len(c.regions) > 1 {
		errs = append(errs, fmt.Errorf("without a kubeconfig a worker serves the cluster it runs in: give one --region, or --kubeconfig with a context per region"))
	}
	if c.kubeconfig == "" && c.kubeContext != "" {
		errs = append(errs, fmt.Errorf("--context %s needs --kubeconfig (or KUBECONFIG)", c.kubeContext))
	}
	if err := c.notifications.check(); err != nil {
		errs = append(errs, err)
	}
	if err := c.objects.check(); err != nil {
		errs = append(errs, err)
	}
	if err := c.impersonable().Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.maxReconciles < 0 {
		errs = append(errs, fmt.Errorf("--max-reconciles %d: give a positive number, or 0 for the default", c.maxReconciles))
	}
	if c.onboardConcurrency < 0 {
		errs = append(errs, fmt.Errorf("--onboard-concurrency %d: give a number of apps, or 0 for no bound", c.onboardConcurrency))
	}
	if c.onboardWait <= 0 {
		errs = append(errs, fmt.Errorf("--onboard-wait %s: give a positive duration", c.onboardWait))
	}
	if c.fullCompareEvery < 1 {
		errs = append(errs, fmt.Errorf("--full-compare-every %d: give 1 (compare every poll) or more", c.fullCompareEvery))
	}
	if c.fullCompareInterval <= 0 {
		errs = append(errs, fmt.Errorf("--full-compare-interval %s: give a positive duration, such as 30m", c.fullCompareInterval))
	}
	if c.repoPollInterval < 0 {
		errs = append(errs, fmt.Errorf("--repo-poll-interval %s: give a positive duration, such as 3m, or 0 for off", c.repoPollInterval))
	}
	if err := checkUIURL(c.uiURL); err != nil {
		errs = append(errs, err)
	}
	if c.render.maxObjects <= 0 {
		errs = append(errs, fmt.Errorf("--render-max-objects %d: give a positive number", c.render.maxObjects))
	}
	if p := c.render.runscPlatform; p != "" && !slices.Contains(sandbox.Platforms, p) {
		errs = append(errs, fmt.Errorf("--runsc-platform %q: write one of %s", p, strings.Join(sandbox.Platforms, ", ")))
	}
	if c.render.pool < 0 {
		errs = append(errs, fmt.Errorf("--render-sandbox-pool %d: give a number of sandboxes, or 0 for none", c.render.pool))
	}
	if c.render.reuse < 1 {
		errs = append(errs, fmt.Errorf("--render-sandbox-reuse %d: give a number of renders, 1 or more (1: a sandbox per render)", c.render.reuse))
	}
	if c.render.timeout < 0 {
		errs = append(errs, fmt.Errorf("--render-timeout %s: give a positive duration, or 0 for the default", c.render.timeout))
	}
	if hosts, err := netpolicy.ParseHosts(c.render.allowHosts, "--render-allow-hosts"); err != nil {
		errs = append(errs, err)
	} else {
		c.render.hosts = hosts
		if c.render.egress, err = egress.ParseRules(c.render.pluginEgress, hosts); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := c.redis.conn(c.redisAddr); err != nil {
		errs = append(errs, err)
	}
	if rc, err := regions.Configure(c.regionsConfig, c.regionList(), c.inClusterRegion); err != nil {
		errs = append(errs, fmt.Errorf("--regions-config, --regions, --in-cluster-region: %w", err))
	} else {
		c.regionsCfg = rc
		if c.readsClusterSecrets() {
			c.regionsCfg = regions.NewLive(rc)
		}
	}
	if err := c.tuning.check(); err != nil {
		errs = append(errs, err)
	}
	if c.shutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-timeout %s: give a positive duration, or 0 to stop at once", c.shutdownTimeout))
	}
	return errors.Join(errs...)
}

func (c *config) contextOf(region string) string {
	if c.kubeContext != "" {
		return c.kubeContext
	}
	return region
}

// readsClusterSecrets: the worker reads the cluster Secrets of the control
// namespace, as Argo CD always does.
func (c *config) readsClusterSecrets() bool { return c.clusterSecrets && c.objects.namespace != "" }

func (c *config) regionList() []string { return splitList(c.knownRegions) }

// impersonable is where the region workers may find the ServiceAccounts
// they impersonate.
func (c *config) impersonable() app.ImpersonationScope {
	return app.ImpersonationScope{Namespaces: splitList(c.impersonationNamespaces), Flag: "--impersonation-namespaces"}
}

type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	*l = append(*l, splitList(v)...)
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func defaultCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return dir + "/ferry/repos"
	}
	return os.TempDir() + "/ferry-repos"
}

// usage is the worker's help text (flagenv.Usage).
func usage(fs *flag.FlagSet) string {
	return flagenv.Usage(fs, "FERRY_", "Usage: ferry-worker [--control] [--region NAME]... [flags]")
}

// checkUIURL accepts an absolute http(s) URL, or nothing.
func checkUIURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--ui-url %q: give ferry-server's absolute address, such as https://ferry.example.com", s)
	}
	return nil
}
