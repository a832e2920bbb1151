package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/clienttls"
	"github.com/ferry-gitops/ferry/internal/clusters"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// temporalFlags are shared by every `ferry app` command.
type temporalFlags struct {
	address   string
	namespace string
	tls       clienttls.Files
	// tlsOn is TEMPORAL_TLS: TLS with the system roots and no other file.
	tlsOn bool
}

func (f *temporalFlags) register(cmd *cobra.Command) { f.registerAs(cmd, "namespace") }

// registerAs registers the flags with the Temporal namespace's named
// namespaceFlag: ferry import's --namespace is Argo CD's.
func (f *temporalFlags) registerAs(cmd *cobra.Command, namespaceFlag string) {
	cmd.PersistentFlags().StringVar(&f.address, "temporal-address", firstEnv("127.0.0.1:7233", "FERRY_TEMPORAL_ADDRESS", "TEMPORAL_ADDRESS"),
		"Temporal frontend host:port (env FERRY_TEMPORAL_ADDRESS or TEMPORAL_ADDRESS)")
	cmd.PersistentFlags().StringVar(&f.namespace, namespaceFlag, firstEnv("default", "FERRY_NAMESPACE", "TEMPORAL_NAMESPACE"),
		"Temporal namespace (env FERRY_NAMESPACE or TEMPORAL_NAMESPACE)")
	// The worker's flags, and the variables the temporal CLI reads (its
	// older TEMPORAL_TLS_CERT form first, which it lets win, then its
	// newer names).
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.tls.Cert, "temporal-tls-cert", firstEnv("", "FERRY_TEMPORAL_TLS_CERT", "TEMPORAL_TLS_CERT", "TEMPORAL_TLS_CLIENT_CERT_PATH"),
		"PEM client certificate file for TLS to Temporal (env FERRY_TEMPORAL_TLS_CERT, TEMPORAL_TLS_CERT or TEMPORAL_TLS_CLIENT_CERT_PATH)")
	pf.StringVar(&f.tls.Key, "temporal-tls-key", firstEnv("", "FERRY_TEMPORAL_TLS_KEY", "TEMPORAL_TLS_KEY", "TEMPORAL_TLS_CLIENT_KEY_PATH"),
		"PEM key file of --temporal-tls-cert (env FERRY_TEMPORAL_TLS_KEY, TEMPORAL_TLS_KEY or TEMPORAL_TLS_CLIENT_KEY_PATH)")
	pf.StringVar(&f.tls.CA, "temporal-tls-ca", firstEnv("", "FERRY_TEMPORAL_TLS_CA", "TEMPORAL_TLS_CA", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"),
		"PEM CA bundle file of the Temporal server; empty: the system roots (env FERRY_TEMPORAL_TLS_CA, TEMPORAL_TLS_CA or TEMPORAL_TLS_SERVER_CA_CERT_PATH)")
	pf.StringVar(&f.tls.ServerName, "temporal-tls-server-name", firstEnv("", "FERRY_TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_TLS_SERVER_NAME"),
		"name to verify in the server's certificate; empty: the host of --temporal-address (env FERRY_TEMPORAL_TLS_SERVER_NAME or TEMPORAL_TLS_SERVER_NAME)")
	f.tlsOn, _ = strconv.ParseBool(os.Getenv("TEMPORAL_TLS"))
}

// tlsConfig is the TLS of the connection to Temporal: on when a TLS flag or
// variable is set, as the worker's --temporal-tls-* and the temporal CLI.
func (f *temporalFlags) tlsConfig() (*tls.Config, error) {
	if !f.tls.Set() && !f.tlsOn {
		return nil, nil
	}
	return f.tls.Config(f.address, "Temporal", "--temporal-tls")
}

func (f *temporalFlags) dial(ctx context.Context) (client.Client, error) {
	if sc, err := loggedIn(); err != nil {
		return nil, err
	} else if sc != nil {
		return nil, notThroughDoor(sc)
	}
	tlsConfig, err := f.tlsConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: f.address, Namespace: f.namespace, Logger: quietLogger{}, Identity: cliIdentity(),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsConfig}})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w (is the stack up? set TEMPORAL_ADDRESS)", f.address, err)
	}
	return c, nil
}

// cliIdentity is the CLI's Temporal client identity, ferry-cli:USER@HOST,
// which the server records on what the CLI does (the history's events) and
// a sync request names as its initiatedBy: the workflow cannot read an
// update's caller itself. The SDK's default (pid@host) names no user.
func cliIdentity() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = strconv.Itoa(os.Getuid())
	}
	host, _ := os.Hostname()
	return "ferry-cli:" + name + "@" + cmp.Or(host, "localhost")
}

func firstEnv(def string, names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return def
}

// run adapts a command body that needs a Temporal client: it dials, runs
// fn and closes the connection.
func (f *temporalFlags) run(fn func(cmd *cobra.Command, c client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := f.dial(cmd.Context())
		if err != nil {
			return err
		}
		defer c.Close()
		return fn(cmd, c, args)
	}
}

// runOrDoor is run, or viaDoor when the user logged in to a ferry-server.
func (f *temporalFlags) runOrDoor(fn func(cmd *cobra.Command, c client.Client, args []string) error,
	viaDoor func(cmd *cobra.Command, a *api, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if a, err := door(); err != nil || a != nil {
			if err != nil {
				return err
			}
			return viaDoor(cmd, a, args)
		}
		return f.run(fn)(cmd, args)
	}
}

// runOnApp adapts a command body that reads the status of the app named by
// its first argument (through the server, once logged in).
func (f *temporalFlags) runOnApp(fn func(cmd *cobra.Command, v *contract.View) error) func(*cobra.Command, []string) error {
	return f.runOrDoor(func(cmd *cobra.Command, c client.Client, args []string) error {
		v, err := queryApp(cmd.Context(), c, args[0])
		if err != nil {
			return err
		}
		return fn(cmd, v)
	}, func(cmd *cobra.Command, a *api, args []string) error {
		v, err := doorView(cmd.Context(), a, args[0], nil)
		if err != nil {
			return err
		}
		return fn(cmd, v)
	})
}

// queryOnce dials Temporal, answers the status query of the app called
// name, and closes the connection.
func (f *temporalFlags) queryOnce(ctx context.Context, name string) (*contract.View, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return queryApp(ctx, c, name)
}

// queryApp answers the status query of the app called name.
func queryApp(ctx context.Context, c client.Client, name string) (*contract.View, error) {
	v, err := ferryclient.Query(ctx, c, name)
	if err != nil {
		return nil, appError(name, "query", err)
	}
	return v, nil
}

// validateOptions are what the CLI knows of the regions, as the workers'
// flags' environment twins say: FERRY_REGIONS_CONFIG (a regions
// configuration file, as `ferry dev up` writes it), FERRY_REGIONS and
// FERRY_IN_CLUSTER_REGION; the workflow validates again with the worker's.
func validateOptions() (app.ValidateOptions, error) {
	rc, err := regions.Configure(os.Getenv("FERRY_REGIONS_CONFIG"), splitList(os.Getenv("FERRY_REGIONS")), os.Getenv("FERRY_IN_CLUSTER_REGION"))
	if err != nil {
		return app.ValidateOptions{}, fmt.Errorf("the regions of FERRY_REGIONS_CONFIG, FERRY_REGIONS and FERRY_IN_CLUSTER_REGION: %w", err)
	}
	return app.ValidateOptions{Regions: withClusterSecrets(rc)}, nil
}

// withClusterSecrets is rc and the regions of the control namespace's
// cluster Secrets, which the workers read as well (FERRY_CONTROL_NAMESPACE,
// FERRY_CONTROL_CONTEXT; FERRY_CLUSTER_SECRETS=false leaves them out). When
// they cannot be read, rc alone: the workers validate again.
func withClusterSecrets(rc *regions.Config) *regions.Config {
	cf := &controlFlags{namespace: os.Getenv("FERRY_CONTROL_NAMESPACE"), context: os.Getenv("FERRY_CONTROL_CONTEXT")}
	if cf.namespace == "" || os.Getenv("FERRY_CLUSTER_SECRETS") == "false" {
		return rc
	}
	control, ns, err := clusterSecrets(cf)
	if err != nil {
		return rc
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := clusters.List(ctx, control, ns)
	if err != nil || len(list) == 0 {
		return rc
	}
	live := regions.NewLive(rc)
	rs := make([]regions.Region, len(list))
	for i, c := range list {
		rs[i] = c.Region
	}
	live.SetClusters(rs)
	return live
}

// knownRegions is validateOptions' regions, or none (any name) when they do
// not load: commands that only show an app need not fail for it.
func knownRegions() *regions.Config {
	opts, _ := validateOptions()
	return opts.Regions
}

// quietLogger keeps the SDK's own logging off the CLI's output.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
