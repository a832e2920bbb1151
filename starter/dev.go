package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

func newDevCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dev", Short: "Run Ferry's local stack"}
	cmd.AddCommand(newDevUpCmd(), newDevPublishChartCmd())
	return cmd
}

func newDevUpCmd() *cobra.Command {
	var (
		regions  []string
		stateDir string
		temporal string
		control  bool
		argoCD   bool
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local stack and run it until interrupted",
		Long: `Start the local stack: per region a Kubernetes control plane (etcd,
kube-apiserver, kube-controller-manager, kube-scheduler) with a kwok fake Node,
plus Temporal with its Web UI, Redis, a Git server, a Helm chart repository,
an OCI registry, Mailpit (an SMTP server whose mailbox takes email
notifications) and Dex, an OIDC provider with the users alice
(alice@example.com, password alice-password, group team-a) and bob
(bob@example.com, bob-password, team-b). With --control (the default) one more API server is the
control cluster: kube context control, namespace argocd, with the CRDs of
Argo CD's Application, AppProject and ApplicationSet. Temporal is the CLI's dev server (--temporal dev), or
with --temporal cluster a cluster as a production deployment runs it: the
frontend, history, matching and worker services of the Temporal server as
separate processes, on PostgreSQL.

Once every part is ready it writes DIR/env, a file that sh can source
(TEMPORAL_ADDRESS, TEMPORAL_UI_URL, FERRY_REGIONS, KUBECONFIG,
FERRY_REGIONS_CONFIG, REDIS_ADDR, FERRY_GIT_URL, FERRY_HELM_REPO_URL,
FERRY_OCI_REGISTRY, FERRY_CONTROL_CONTEXT, FERRY_CONTROL_NAMESPACE,
FERRY_OIDC_ISSUER, FERRY_OIDC_CLIENT_ID and FERRY_OIDC_CLIENT_SECRET (Dex's
client for ferry-server), FERRY_SERVER_LISTEN (a free port kept for
ferry-server, whose /auth/callback Dex accepts), FERRY_SMTP_ADDR and
FERRY_MAILPIT_URL (Mailpit's SMTP address and web UI/API), FERRY_TOOLS_BIN, PATH), then runs until SIGINT or SIGTERM
and stops every process it started. DIR is wiped on start, except DIR/git,
DIR/helm and DIR/registry. With FERRY_HELM_REPO_USERNAME and
FERRY_HELM_REPO_PASSWORD set, the Helm repository asks for them (basic auth).

With --argocd, Argo CD runs too, as the peer the benchmarks and the
takeover tests run: its application controller, repo server, ApplicationSet
controller and API server (for its webhook; no UI), in the first region's
namespace argocd, every region an Argo CD cluster Secret
(hack/tools.sh argocd builds it, once, in about 10 to 25 minutes).

The tools come from $FERRY_TOOLS_BIN, else from hack/tools.sh in the
checkout, which builds them on first use (about 10 minutes).`,
		Example: `  ferry dev up &
  . ~/.local/state/ferry/dev/env
  kubectl --context us-east-1 get nodes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDevUp(cmd, devenv.Options{Regions: regions, StateDir: stateDir, Temporal: devenv.TemporalMode(temporal), Control: control}, argoCD)
		},
	}
	cmd.Flags().StringSliceVar(&regions, "regions", devenv.DefaultRegions, "regions to run, one control plane each, comma-separated")
	cmd.Flags().StringVar(&temporal, "temporal", string(devenv.TemporalDev),
		"Temporal to run: dev (the single-process dev server) or cluster (the server's services on PostgreSQL)")
	cmd.Flags().BoolVar(&control, "control", true,
		"run the control cluster: kube context control, namespace argocd, Argo CD's CRDs")
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultDevStateDir(),
		"directory for data, logs, kubeconfig and env ($XDG_STATE_HOME/ferry/dev, else ~/.local/state/ferry/dev)")
	cmd.Flags().BoolVar(&argoCD, "argocd", false, "run Argo CD too, in the first region's namespace argocd (hack/tools.sh argocd builds it)")
	return cmd
}

func runDevUp(cmd *cobra.Command, opts devenv.Options, withArgoCD bool) error {
	ctx, stopSignals := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	devenv.FollowGoRun()
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()

	opts.Log = errOut
	s, err := devenv.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("dev up: %w", err)
	}
	argoCD := &devenv.ArgoCD{}
	if withArgoCD {
		if argoCD, err = s.StartArgoCD(ctx, devenv.ArgoCDOptions{Server: true, AppSets: true}); err != nil {
			return errors.Join(fmt.Errorf("dev up: %w", err), s.Stop())
		}
	}
	envPath := filepath.Join(s.StateDir, "env")
	if err := s.WriteEnv(envPath); err != nil {
		return errors.Join(fmt.Errorf("dev up: %w", err), s.Stop())
	}
	fmt.Fprintf(out, `Ferry dev stack ready in %s
  Temporal      %s (namespace %s, %s)
  Temporal UI   %s
  regions       %s (kubectl --context <region>)
%s  KUBECONFIG    %s
  Redis         %s
  Git           %s/<name>.git
  Helm repo     %s
  OCI registry  %s (charts: oci://%s/charts/<name>)
%s%s%s  logs          %s
  env           . %s
Press Ctrl-C to stop.
`, s.StartDuration.Round(10*time.Millisecond), s.TemporalAddress, s.Namespace, temporalKind(s.Temporal), s.TemporalUIURL,
		strings.Join(s.Regions, ", "), controlLine(s), s.Kubeconfig, s.RedisAddr, s.GitURL, s.HelmRepoURL, s.OCIRegistry, s.OCIRegistry, oidcLine(s), mailLine(s), argoCDLine(argoCD), s.LogDir, envPath)

	runErr := waitDevStack(ctx, s)
	// Signals stay caught while the stack stops: a second Ctrl-C, or the
	// repeated parent-death signal of FollowGoRun, must not cut Stop short
	// (it takes seconds at most).
	fmt.Fprintln(errOut, "ferry: stopping the dev stack")
	_ = os.Remove(envPath) // the addresses in it are about to be dead
	return errors.Join(runErr, argoCD.Stop(), s.Stop())
}

// argoCDLine is what dev up says of Argo CD, if it runs.
func argoCDLine(a *devenv.ArgoCD) string {
	if a.Home == "" {
		return ""
	}
	return fmt.Sprintf("  Argo CD       %s: kubectl --context %s -n %s get applications,applicationsets; webhook http://%s/api/webhook\n",
		a.Version, a.Home, devenv.ArgoCDNamespace, a.ServerAddr)
}

// controlLine is what dev up says of the control cluster, if it runs one.
func controlLine(s *devenv.Stack) string {
	if s.ControlContext == "" {
		return ""
	}
	return fmt.Sprintf("  control       kubectl --context %s -n %s get applications\n", s.ControlContext, s.ControlNamespace)
}

// mailLine is what dev up says of Mailpit, if it runs.
func mailLine(s *devenv.Stack) string {
	if s.SMTPAddr == "" {
		return ""
	}
	return fmt.Sprintf("  SMTP          %s (mailbox %s)\n", s.SMTPAddr, s.MailpitURL)
}

// oidcLine is what dev up says of Dex, if it runs.
func oidcLine(s *devenv.Stack) string {
	if s.OIDCIssuer == "" {
		return ""
	}
	var users []string
	for _, u := range devenv.DexUsers {
		users = append(users, fmt.Sprintf("%s/%s (%s)", u.Email, u.Password, strings.Join(u.Groups, ",")))
	}
	return fmt.Sprintf("  OIDC (Dex)    %s (client %s; users %s)\n", s.OIDCIssuer, s.OIDCClientID, strings.Join(users, ", "))
}

func temporalKind(m devenv.TemporalMode) string {
	if m == devenv.TemporalCluster {
		return "cluster: frontend, history, matching, worker on PostgreSQL"
	}
	return "dev server"
}

// waitDevStack returns nil when ctx ends, or an error as soon as a process
// of the stack dies.
func waitDevStack(ctx context.Context, s *devenv.Stack) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := s.Check(); err != nil {
				return fmt.Errorf("dev up: %w", err)
			}
		}
	}
}

func defaultDevStateDir() string {
	if dir := os.Getenv("XDG_STATE_HOME"); dir != "" {
		return filepath.Join(dir, "ferry", "dev")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "ferry", "dev")
	}
	return filepath.Join(os.TempDir(), "ferry-dev")
}

func newDevPublishChartCmd() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "publish-chart DIR",
		Short: "Package a chart directory and publish it to the dev stack's Helm repository and OCI registry",
		Long: `Package the chart in DIR as helm package does (its charts/ included) and
publish it to the running dev stack: into its Helm repository
($FERRY_HELM_REPO_URL, index.yaml regenerated) and to its OCI registry as
oci://$FERRY_OCI_REGISTRY/charts/<name>:<version>. Publishing a version again
replaces it.`,
		Example: `  ferry dev publish-chart ./charts/guestbook
  # then, in an Application:
  #   repoURL: $FERRY_HELM_REPO_URL   chart: guestbook   targetRevision: 1.*`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := devenv.TargetOfStateDir(stateDir)
			if err != nil {
				return fmt.Errorf("publish-chart: %w", err)
			}
			p, err := devenv.PublishChart(cmd.Context(), args[0], t)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "published %s %s (%s)\n  Helm repository  %s\n  OCI              %s:%s (%s)\n",
				p.Name, p.Version, p.Digest, p.Archive, p.OCIRef, p.Version, p.OCIDigest)
			return nil
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultDevStateDir(), "the state dir of the running `ferry dev up`")
	return cmd
}
