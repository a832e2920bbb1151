package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// config is the worker's configuration; every flag has a FERRY_* twin in the
// environment (FERRY_TEMPORAL_ADDRESS for --temporal-address, …).
type config struct {
	temporalAddress string
	namespace       string
	control         bool
	regions         stringList
	kubeconfig      string
	kubeContext     string
	knownRegions    string
	inClusterRegion string
	redisAddr       string
	cacheDir        string
	webhookAddr     string
	metricsAddr     string
	shutdownTimeout time.Duration
	maxReconciles   int
	tls             tlsFlags
	render          renderFlags

	// webhookAllowUnsigned accepts deliveries of providers without a secret.
	webhookAllowUnsigned bool
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("ferry-worker", flag.ContinueOnError)
	str := func(p *string, name, def, usage string) {
		fs.StringVar(p, name, envOr(name, def), usage+" (env "+envName(name)+")")
	}
	str(&c.temporalAddress, "temporal-address", "127.0.0.1:7233", "Temporal frontend host:port")
	str(&c.namespace, "namespace", "default", "Temporal namespace")
	fs.BoolVar(&c.control, "control", envOr("control", "") == "true",
		"serve the workflows and the Git and render activities on queue ferry (env FERRY_CONTROL=true)")
	fs.Var(&c.regions, "region", "serve the activities of this region on queue ferry-region-NAME; repeatable (env FERRY_REGION, comma-separated, used when no --region is given)")
	str(&c.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the regions (default $KUBECONFIG)")
	str(&c.kubeContext, "context", "", "kubeconfig context of the region (default: the region's name)")
	str(&c.knownRegions, "regions", "", "comma-separated regions apps may target; empty accepts any")
	str(&c.inClusterRegion, "in-cluster-region", "", "region that Argo CD's https://kubernetes.default.svc maps to")
	str(&c.redisAddr, "redis-addr", "", "Redis host:port of the manifest cache; empty: in-process cache")
	str(&c.cacheDir, "cache-dir", defaultCacheDir(), "directory of the Git clone cache")
	str(&c.webhookAddr, "webhook-addr", "", "address of the Git webhook endpoint POST /api/webhook; empty: off")
	fs.BoolVar(&c.webhookAllowUnsigned, "webhook-allow-unsigned", envOr("webhook-allow-unsigned", "") == "true",
		"accept webhook deliveries of providers that have no FERRY_WEBHOOK_<PROVIDER>_SECRET; anyone who reaches the endpoint can then trigger refreshes (env FERRY_WEBHOOK_ALLOW_UNSIGNED=true)")
	str(&c.metricsAddr, "metrics-addr", "127.0.0.1:9090", "address of /metrics and /healthz; empty: off")
	str(&c.tls.cert, "temporal-tls-cert", "", "PEM client certificate for TLS to Temporal")
	str(&c.tls.key, "temporal-tls-key", "", "PEM key of --temporal-tls-cert")
	str(&c.tls.ca, "temporal-tls-ca", "", "PEM CA bundle of the Temporal server; empty: the system roots (Temporal Cloud)")
	str(&c.tls.serverName, "temporal-tls-server-name", "", "name to verify in the server's certificate; empty: the host of --temporal-address")
	fs.BoolVar(&c.render.allowRemoteBases, "kustomize-allow-remote-bases", envOr("kustomize-allow-remote-bases", "") == "true",
		"let Kustomize fetch remote bases (needs git on PATH) (env FERRY_KUSTOMIZE_ALLOW_REMOTE_BASES=true)")
	str(&c.render.kubeVersion, "helm-kube-version", "", "Kubernetes version Helm charts see in .Capabilities (empty: the version Ferry is built with)")
	str(&c.render.apiVersions, "helm-api-versions", "", "comma-separated API versions Helm charts see beyond the built-in ones, e.g. monitoring.coreos.com/v1")
	fs.DurationVar(&c.render.timeout, "render-timeout", 0, "longest render of one source (0: 90s) (env FERRY_RENDER_TIMEOUT)")
	fs.IntVar(&c.maxReconciles, "max-reconciles", 0,
		"reconciles of an app workflow run before it continues as new (0: the default, 200); keep it equal on every control worker")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long running activities get to finish on SIGTERM")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(c.regions) == 0 {
		_ = c.regions.Set(os.Getenv("FERRY_REGION"))
	}
	c.regions = slices.Compact(slices.Sorted(slices.Values(c.regions)))
	if !c.control && len(c.regions) == 0 {
		return nil, fmt.Errorf("nothing to serve: give --control, --region NAME, or both")
	}
	if c.kubeContext != "" && len(c.regions) > 1 {
		return nil, fmt.Errorf("--context names one context but %d regions were given: run one worker per region, or name each kubeconfig context after its region", len(c.regions))
	}
	if c.kubeconfig == "" && len(c.regions) > 1 {
		return nil, fmt.Errorf("without a kubeconfig a worker serves the cluster it runs in: give one --region, or --kubeconfig with a context per region")
	}
	if c.kubeconfig == "" && c.kubeContext != "" {
		return nil, fmt.Errorf("--context %s needs --kubeconfig (or KUBECONFIG)", c.kubeContext)
	}
	return c, nil
}

func (c *config) contextOf(region string) string {
	if c.kubeContext != "" {
		return c.kubeContext
	}
	return region
}

func (c *config) regionList() []string { return splitList(c.knownRegions) }

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

func envName(flagName string) string {
	return "FERRY_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func envOr(flagName, def string) string {
	if v, ok := os.LookupEnv(envName(flagName)); ok {
		return v
	}
	return def
}

func defaultCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return dir + "/ferry/repos"
	}
	return os.TempDir() + "/ferry-repos"
}
