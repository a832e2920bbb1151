package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/flagenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		regions []string
		wantErr string
	}{
		{name: "env region when no flag", env: map[string]string{"FERRY_REGION": "us-east-1"}, regions: []string{"us-east-1"}},
		{name: "env regions comma-separated", env: map[string]string{"FERRY_REGION": "b,a", "FERRY_KUBECONFIG": "k"}, regions: []string{"a", "b"}},
		{name: "flag overrides env", env: map[string]string{"FERRY_REGION": "us-east-1"}, args: []string{"--region", "eu-west-1", "--kubeconfig", "k"}, regions: []string{"eu-west-1"}},
		{name: "duplicates dropped", args: []string{"--region", "a", "--region", "a,b", "--kubeconfig", "k"}, regions: []string{"a", "b"}},
		{name: "empty variable counts as unset", env: map[string]string{"FERRY_REGION": "", "FERRY_CONTROL": "true"}},
		{name: "in-cluster serves one region", args: []string{"--region", "a", "--region", "b"}, wantErr: "without a kubeconfig"},
		{name: "context needs kubeconfig", args: []string{"--region", "a", "--context", "x"}, wantErr: "needs --kubeconfig"},
		{name: "nothing to serve", args: []string{}, wantErr: "nothing to serve"},
		{name: "invalid twin", env: map[string]string{"FERRY_RENDER_TIMEOUT": "abc"}, args: []string{"--control"},
			wantErr: `FERRY_RENDER_TIMEOUT="abc" (the twin of --render-timeout): write a duration such as 90s`},
		{name: "notifications from a file and the cluster", args: []string{"--control", "--notifications-config", "cm.yaml", "--notifications-namespace", "argocd"},
			wantErr: "--notifications-namespace argocd reads argocd-notifications-cm and argocd-notifications-secret from the control cluster: give it or --notifications-config/--notifications-secret, not both"},
		{name: "notifications secret file and the cluster", args: []string{"--control", "--notifications-secret", "s.yaml", "--notifications-namespace", "argocd"},
			wantErr: "not both"},
		{name: "notifications context needs a namespace", args: []string{"--control", "--notifications-context", "x"},
			wantErr: "--notifications-context x needs --notifications-namespace"},
		{name: "ui url", args: []string{"--control", "--ui-url", "https://ferry.example.com/"}},
		{name: "relative ui url", args: []string{"--control", "--ui-url", "ferry.example.com"},
			wantErr: `--ui-url "ferry.example.com": give ferry-server's absolute address, such as https://ferry.example.com`},
		{name: "negative max reconciles", args: []string{"--control", "--max-reconciles", "-1"}, wantErr: "--max-reconciles -1: give a positive number"},
		{name: "no onboard wait", args: []string{"--control", "--onboard-wait", "0s"}, wantErr: "--onboard-wait 0s: give a positive duration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := parseFlags(tc.args, io.Discard)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.regions, []string(cfg.regions))
		})
	}
}

// TestParseFlagsEnv: the twins reach the configuration, KUBECONFIG stands
// in for FERRY_KUBECONFIG, and metrics are off unless asked for.
func TestParseFlagsEnv(t *testing.T) {
	clearEnv(t)
	t.Setenv("FERRY_CONTROL", "true")
	t.Setenv("FERRY_SHUTDOWN_TIMEOUT", "42s")
	t.Setenv("FERRY_MAX_RECONCILES", "9")
	t.Setenv("FERRY_RENDER_TIMEOUT", "2m")
	t.Setenv("KUBECONFIG", "/from/kubeconfig")
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.True(t, cfg.control)
	assert.Equal(t, 42*time.Second, cfg.shutdownTimeout)
	assert.Equal(t, 9, cfg.maxReconciles)
	assert.Equal(t, 2*time.Minute, cfg.render.timeout)
	assert.Equal(t, "/from/kubeconfig", cfg.kubeconfig)
	assert.Empty(t, cfg.metricsAddr, "a worker started without --metrics-addr serves no metrics port")
	assert.Empty(t, cfg.pprofAddr, "nor profiles without --pprof-addr")
	assert.NotEmpty(t, cfg.cacheDir)

	t.Setenv("FERRY_KUBECONFIG", "/from/ferry")
	cfg, err = parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "/from/ferry", cfg.kubeconfig)
}

// TestEveryFlagHasItsTwin walks the flag set, so that a new flag cannot go
// without its environment twin: for each flag, FERRY_<NAME> sets it when
// the command line does not, the command line wins over it, and the usage
// names it.
func TestEveryFlagHasItsTwin(t *testing.T) {
	fs := newFlagSet(&config{}, io.Discard)
	text := usage(fs)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		fromEnv, fromFlag, ok := samples(f)
		if !ok {
			t.Errorf("--%s: the test has no sample value of type %T: add one to samples", f.Name, f.Value)
			return
		}
		env := map[string]string{flagenv.EnvName("FERRY_", f.Name): fromEnv}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

		_, got, err := parse(nil, lookup, io.Discard)
		require.NoError(t, err, "--%s from %s=%s", f.Name, flagenv.EnvName("FERRY_", f.Name), fromEnv)
		assert.Equal(t, fromEnv, got.Lookup(f.Name).Value.String(), "%s=%s does not set --%s", flagenv.EnvName("FERRY_", f.Name), fromEnv, f.Name)

		_, got, err = parse([]string{"--" + f.Name + "=" + fromFlag}, lookup, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, fromFlag, got.Lookup(f.Name).Value.String(), "--%s on the command line must win over %s", f.Name, flagenv.EnvName("FERRY_", f.Name))

		assert.Contains(t, text, "  --"+f.Name+" ", "the usage lists --%s", f.Name)
		assert.Contains(t, text, "("+flagenv.EnvName("FERRY_", f.Name)+")", "the usage names %s, the twin of --%s", flagenv.EnvName("FERRY_", f.Name), f.Name)
	})
	assert.Greater(t, n, 20, "the flag set has the worker's flags")
}

// samples are two valid values of a flag, neither its default.
func samples(f *flag.Flag) (fromEnv, fromFlag string, ok bool) {
	switch f.Value.(type) {
	case *stringList:
		return "from-env", "from-flag", true
	case *egressFlag:
		return "env=h.example.com", "flag=h.example.com", true
	case *sandboxFlag:
		return "process", "none", true
	case *bytesFlag:
		return "512Mi", "2Gi", true
	case *pollersFlag:
		return "4", "auto", true
	}
	getter, _ := f.Value.(flag.Getter)
	if getter == nil {
		return "", "", false
	}
	switch getter.Get().(type) {
	case bool:
		return "true", "false", true
	case string:
		return "from-env", "from-flag", true
	case int:
		return "7", "8", true
	case time.Duration:
		return "7s", "8s", true
	}
	return "", "", false
}

// TestInvalidTwins: every invalid variable is reported at once, by name.
func TestInvalidTwins(t *testing.T) {
	env := map[string]string{"FERRY_RENDER_TIMEOUT": "abc", "FERRY_MAX_RECONCILES": "ten", "FERRY_CONTROL": "yes"}
	_, _, err := parse(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	require.Error(t, err)
	for _, want := range []string{
		`FERRY_RENDER_TIMEOUT="abc" (the twin of --render-timeout): write a duration`,
		`FERRY_MAX_RECONCILES="ten" (the twin of --max-reconciles): write a whole number`,
		`FERRY_CONTROL="yes" (the twin of --control): write true or false`,
	} {
		assert.ErrorContains(t, err, want)
	}
}

// clearEnv unsets, for the test, every twin and KUBECONFIG that the
// developer's shell may have set.
func clearEnv(t *testing.T) {
	t.Helper()
	t.Setenv("KUBECONFIG", "")
	newFlagSet(&config{}, io.Discard).VisitAll(func(f *flag.Flag) { t.Setenv(flagenv.EnvName("FERRY_", f.Name), "") })
}

func TestTLSFlags(t *testing.T) {
	_, err := tlsFlags{cert: "c.pem"}.config("temporal:7233")
	require.ErrorContains(t, err, "give both --temporal-tls-cert and --temporal-tls-key")
	cfg, err := tlsFlags{serverName: ""}.config("temporal:7233")
	require.NoError(t, err)
	require.Nil(t, cfg, "no TLS flag: plain connection")
	cfg, err = tlsFlags{serverName: "ns.tmprl.cloud"}.config("ns.tmprl.cloud:7233")
	require.NoError(t, err)
	require.Equal(t, "ns.tmprl.cloud", cfg.ServerName)
}

// TestRegionsConfigFlag: --regions-config (or its twin) is loaded at start,
// --regions must agree with it, and a bad file stops the worker.
func TestRegionsConfigFlag(t *testing.T) {
	clearEnv(t)
	file := filepath.Join(t.TempDir(), "regions.yaml")
	require.NoError(t, os.WriteFile(file, []byte("regions:\n  - {name: us-east-1, server: 'https://10.0.0.1:6443'}\n  - {name: eu-west-1, inCluster: true}\n"), 0o644))
	t.Setenv("FERRY_REGIONS_CONFIG", file)
	cfg, err := parseFlags([]string{"--control", "--regions", "eu-west-1,us-east-1"}, io.Discard)
	require.NoError(t, err)
	r, ok := cfg.regionsCfg.ByServer("https://10.0.0.1:6443")
	require.True(t, ok)
	require.Equal(t, "us-east-1", r.Name)

	_, err = parseFlags([]string{"--control", "--regions", "us-east-1"}, io.Discard)
	require.ErrorContains(t, err, "--regions-config, --regions, --in-cluster-region: the regions given (us-east-1) are not those of "+file)
	require.NoError(t, os.WriteFile(file, []byte("regions:\n  - {name: us-east-1, sever: x}\n"), 0o644))
	_, err = parseFlags([]string{"--control"}, io.Discard)
	require.ErrorContains(t, err, `unknown field "sever"`)

	// No configuration at all: the in-cluster destination is the region
	// named in-cluster.
	t.Setenv("FERRY_REGIONS_CONFIG", "")
	cfg, err = parseFlags([]string{"--control"}, io.Discard)
	require.NoError(t, err)
	r, ok = cfg.regionsCfg.InClusterRegion()
	require.True(t, ok)
	require.Equal(t, "in-cluster", r.Name)
}

func TestRenderAllowHosts(t *testing.T) {
	clearEnv(t)
	t.Setenv("FERRY_RENDER_ALLOW_HOSTS", "127.0.0.1:5000, git.internal,10.0.0.0/8")
	cfg, err := parseFlags([]string{"--control"}, io.Discard)
	require.NoError(t, err)
	require.NoError(t, cfg.render.hosts.CheckURL("oci://127.0.0.1:5000/charts"))
	require.NoError(t, cfg.render.hosts.CheckURL("http://10.1.2.3/charts"))
	require.ErrorContains(t, cfg.render.hosts.CheckURL("http://127.0.0.1:5001/charts"), "lists it in --render-allow-hosts")

	clearEnv(t)
	cfg, err = parseFlags([]string{"--control"}, io.Discard)
	require.NoError(t, err)
	require.ErrorContains(t, cfg.render.hosts.CheckURL("http://169.254.169.254/"), "the cloud metadata address",
		"a worker with no list refuses the metadata service")

	_, err = parseFlags([]string{"--control", "--render-allow-hosts", "10.0.0.0/40"}, io.Discard)
	require.ErrorContains(t, err, `--render-allow-hosts: "10.0.0.0/40" is not a CIDR range`)
}

// TestPluginEgress: --plugin-egress keeps each value whole (its hosts are
// comma-separated), its twin holds several plugins separated by ';', and
// a bad entry is named.
func TestPluginEgress(t *testing.T) {
	clearEnv(t)
	cfg, err := parseFlags([]string{"--control", "--plugin-egress", "vault=vault.example.com:8200,backup.example.com", "--plugin-egress", "helmfile-v1=*.example.org"}, io.Discard)
	require.NoError(t, err)
	vault, ok := cfg.render.egress.For("vault")
	require.True(t, ok)
	require.True(t, vault.Allow.Admits("backup.example.com", "443"))
	helmfile, ok := cfg.render.egress.For("helmfile-v1")
	require.True(t, ok)
	require.True(t, helmfile.Allow.Admits("charts.example.org", "443"))
	require.ErrorContains(t, cfg.render.egress.Check([]string{"vault"}), "--plugin-egress helmfile-v1: no plugin of that name")

	t.Setenv("FERRY_PLUGIN_EGRESS", "vault=vault.example.com;helmfile-v1=charts.example.org:443")
	cfg, err = parseFlags([]string{"--control"}, io.Discard)
	require.NoError(t, err)
	helmfile, ok = cfg.render.egress.For("helmfile-v1")
	require.True(t, ok)
	require.True(t, helmfile.Allow.Admits("charts.example.org", "443"))

	_, err = parseFlags([]string{"--control", "--plugin-egress", "vault=http://vault.example.com"}, io.Discard)
	require.ErrorContains(t, err, `--plugin-egress vault: "http://vault.example.com": write the host alone, without a scheme`)
}
