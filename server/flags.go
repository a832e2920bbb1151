package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ferry-gitops/ferry/internal/clienttls"
	"github.com/ferry-gitops/ferry/internal/flagenv"
)

// config is ferry-server's flags.
type config struct {
	listen             string
	tlsCert, tlsKey    string
	temporalAddress    string
	namespace          string
	temporalTLS        clienttls.Files
	kubeconfig         string
	controlContext     string
	controlNamespace   string
	auditLog           string
	url                string
	sessionTTL         time.Duration
	loginFailures      int
	loginFailureWindow time.Duration
	// The regions, for the live-state APIs (resource-tree, logs, …).
	regionsConfig, regions, inClusterRegion string
	regionsKubeconfig                       string
	// temporalUIURL is the Temporal Web UI, which the web UI links to.
	temporalUIURL string
}

var errHelp = errors.New("help")

// envPrefix starts the environment twins of the flags: FERRY_SERVER_LISTEN
// for --listen.
const envPrefix = "FERRY_SERVER_"

func newFlagSet(c *config, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ferry-server", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "`ADDR` (host:port) of the HTTPS listener")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate `FILE` of the listener; with --tls-key. Neither: a self-signed certificate made at start, its SHA-256 fingerprint printed")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM key `FILE` of --tls-cert")
	fs.StringVar(&c.url, "url", "", "the `URL` people reach the server at (https://ferry.example.com), for SSO's redirect; default https:// and --listen")
	fs.StringVar(&c.temporalAddress, "temporal-address", "127.0.0.1:7233", "Temporal frontend `HOST:PORT`")
	fs.StringVar(&c.namespace, "namespace", "default", "Temporal `NAMESPACE` of the apps")
	fs.StringVar(&c.temporalUIURL, "temporal-ui-url", "", "`URL` of the Temporal Web UI, which the web UI links each app's workflow to (https://temporal.example.com); empty: no links")
	fs.StringVar(&c.temporalTLS.Cert, "temporal-tls-cert", "", "PEM client certificate `FILE` of the server's own Temporal identity")
	fs.StringVar(&c.temporalTLS.Key, "temporal-tls-key", "", "PEM key `FILE` of --temporal-tls-cert")
	fs.StringVar(&c.temporalTLS.CA, "temporal-tls-ca", "", "PEM CA bundle `FILE` of the Temporal server; empty: the system roots")
	fs.StringVar(&c.temporalTLS.ServerName, "temporal-tls-server-name", "", "`NAME` to verify in Temporal's certificate; empty: the host of --temporal-address")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` of the control cluster; empty: the cluster the server runs in (its ServiceAccount)")
	fs.StringVar(&c.controlContext, "control-context", "", "kubeconfig `CONTEXT` of the control cluster (default: the current context)")
	fs.StringVar(&c.controlNamespace, "control-namespace", "argocd", "`NAMESPACE` of the control cluster with argocd-cm, argocd-secret, argocd-rbac-cm and the Application objects")
	fs.StringVar(&c.regionsConfig, "regions-config", "", "YAML `FILE` of the regions, as the workers' --regions-config: where each app's destinations run")
	fs.StringVar(&c.regions, "regions", "", "the `REGIONS` apps may target, comma-separated, as the workers' --regions")
	fs.StringVar(&c.inClusterRegion, "in-cluster-region", "", "`REGION` of Argo CD's in-cluster destination, as the workers' --in-cluster-region")
	fs.StringVar(&c.regionsKubeconfig, "regions-kubeconfig", "", "kubeconfig `FILE` with one context per region, named after it, through which the resource tree, managed resources, logs, events and actions of an app read its regions (default --kubeconfig)")
	fs.StringVar(&c.auditLog, "audit-log", "", "`FILE` the audit log's JSON lines are appended to; empty: standard output")
	fs.DurationVar(&c.sessionTTL, "session-ttl", 24*time.Hour, "how long a login's token is valid (`DURATION`)")
	fs.IntVar(&c.loginFailures, "login-max-failures", 5, "failed logins of one user, or from one address, within --login-failure-window after which its logins are refused until the window passes (`N`)")
	fs.DurationVar(&c.loginFailureWindow, "login-failure-window", 5*time.Minute, "the window of --login-max-failures (`DURATION`)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage(fs)) }
	return fs
}

func usage(fs *flag.FlagSet) string {
	return flagenv.Usage(fs, envPrefix, "Usage: ferry-server [flags]")
}

// parseFlags parses args, then the environment twins of the flags args
// does not give.
func parseFlags(args []string, lookup func(string) (string, bool), out io.Writer) (*config, error) {
	c := &config{}
	fs := newFlagSet(c, out)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: ferry-server takes flags only (--help)", fs.Args())
	}
	if err := flagenv.Apply(fs, envPrefix, lookup); err != nil {
		return nil, err
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, errors.New("give both --tls-cert and --tls-key, or neither (a self-signed certificate)")
	}
	if c.kubeconfig == "" {
		c.kubeconfig = os.Getenv("KUBECONFIG")
	}
	if c.regionsKubeconfig == "" {
		c.regionsKubeconfig = c.kubeconfig
	}
	return c, nil
}
