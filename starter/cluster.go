package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/clusters"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/regions"
)

func newClusterCmd() *cobra.Command {
	cf := &controlFlags{}
	cmd := &cobra.Command{Use: "cluster", Short: "Add, list and remove the clusters of Argo CD's cluster Secrets: regions the workers serve without a restart",
		Long: `The clusters of Argo CD's cluster Secrets (label argocd.argoproj.io/secret-type:
cluster) in the control namespace (--control-namespace, --control-context) are
regions: the workers that read them (--cluster-secrets, on with their
--control-namespace) serve each one's queue ferry-region-NAME as soon as its
Secret is written, and stop when it is removed.`}
	cf.register(cmd)
	cmd.AddCommand(newClusterAddCmd(cf), newClusterListCmd(cf), newClusterRmCmd(cf))
	return cmd
}

// clusterSecrets is the control cluster's client and namespace.
func clusterSecrets(cf *controlFlags) (kubernetes.Interface, string, error) {
	if cf.namespace == "" {
		return nil, "", errors.New("no control cluster: give --control-namespace (or FERRY_CONTROL_NAMESPACE), where the cluster Secrets are")
	}
	rc, err := kube.LoadConfig(os.Getenv("KUBECONFIG"), cf.context)
	if err != nil {
		return nil, "", fmt.Errorf("the control cluster (--control-context %q): %w", cf.context, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	return cs, cf.namespace, err
}

func newClusterAddCmd(cf *controlFlags) *cobra.Command {
	var (
		name, project, kubeconfig, systemNS string
		labels, annotations                 []string
	)
	cmd := &cobra.Command{
		Use:   "add CONTEXT",
		Short: "Make the cluster of a kubeconfig context a region, as argocd cluster add does",
		Long: `Make the cluster of kubeconfig context CONTEXT a region, as argocd cluster
add does: create the ServiceAccount argocd-manager in its kube-system (or
--system-namespace), bound to a ClusterRole that may do everything, take that
ServiceAccount's token, and write a cluster Secret with it and the context's
CA into the control namespace. Running it again updates the Secret.`,
		Example: `  ferry cluster add prod-eu --label env=prod
  ferry cluster add kind-dev --name dev --project team-a`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := regions.Region{Name: name, Project: project}
			if r.Name == "" {
				r.Name = args[0]
			}
			var err error
			if r.Labels, err = keyValues("--label", labels); err != nil {
				return err
			}
			if r.Annotations, err = keyValues("--annotation", annotations); err != nil {
				return err
			}
			if kubeconfig == "" {
				kubeconfig = os.Getenv("KUBECONFIG")
			}
			target, err := kube.LoadConfig(kubeconfig, args[0])
			if err != nil {
				return err
			}
			r.Server = strings.TrimSuffix(target.Host, "/")
			control, ns, err := clusterSecrets(cf)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			secretName := clusters.SecretName(r.Server)
			if err := checkNewCluster(ctx, control, ns, secretName, r); err != nil {
				return err
			}
			config, err := clusters.InstallManager(ctx, target, systemNS)
			if err != nil {
				return fmt.Errorf("cluster of context %s: %w", args[0], err)
			}
			s, err := clusters.NewSecret(ns, secretName, r, config)
			if err != nil {
				return err
			}
			secrets := control.CoreV1().Secrets(ns)
			if _, err = secrets.Create(ctx, s, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				if prev, gerr := secrets.Get(ctx, s.Name, metav1.GetOptions{}); gerr == nil {
					s.ResourceVersion = prev.ResourceVersion
				}
				_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
			}
			if err != nil {
				return fmt.Errorf("write cluster Secret %s/%s: %w", ns, s.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster %q (%s) added: region %s, Secret %s/%s\n", r.Name, r.Server, r.Name, ns, s.Name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the cluster's name: its region, a DNS label (default: CONTEXT)")
	f.StringArrayVar(&labels, "label", nil, "a label `KEY=VALUE` of the cluster, which the clusters generator selects on; repeatable")
	f.StringArrayVar(&annotations, "annotation", nil, "an annotation `KEY=VALUE` of the cluster; repeatable")
	f.StringVar(&project, "project", "", "the AppProject the cluster is scoped to")
	f.StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig `FILE` CONTEXT is in (default: $KUBECONFIG)")
	f.StringVar(&systemNS, "system-namespace", "kube-system", "the `NAMESPACE` of the cluster where the argocd-manager ServiceAccount goes")
	return cmd
}

// checkNewCluster refuses a cluster that no worker could serve: a name,
// server or label that is not well formed, or a name or server another
// cluster Secret has. The workers' own regions configuration is theirs to
// check; a clash with it shows in their logs and in ferry cluster list.
func checkNewCluster(ctx context.Context, control kubernetes.Interface, ns, secretName string, r regions.Region) error {
	existing, err := clusters.List(ctx, control, ns)
	if err != nil {
		return err
	}
	var others []regions.Region
	for _, c := range existing {
		if c.Secret != ns+"/"+secretName {
			others = append(others, c.Region)
		}
	}
	if msg := regions.NewLive(nil).SetClusters(append(others, r))[r.Name]; msg != "" {
		return fmt.Errorf("cluster %q: %s", r.Name, msg)
	}
	return nil
}

// keyValues parses the KEY=VALUE items of flag.
func keyValues(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, item := range items {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: write KEY=VALUE", flag, item)
		}
		out[k] = v
	}
	return out, nil
}

func newClusterListCmd(cf *controlFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the clusters of the cluster Secrets, and whether each answers",
		Long: `List the clusters of the cluster Secrets in the control namespace: name,
server, project, labels, and the status of a request to each one's API server
from here (Successful, or Failed with the reason).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			control, ns, err := clusterSecrets(cf)
			if err != nil {
				return err
			}
			list, err := clusters.List(cmd.Context(), control, ns)
			if err != nil {
				return err
			}
			printClusters(cmd.OutOrStdout(), list)
			return nil
		},
	}
}

func printClusters(out io.Writer, list []clusters.Cluster) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVER\tPROJECT\tLABELS\tSTATUS\tMESSAGE")
	for _, c := range list {
		var labels []string
		for _, k := range slices.Sorted(maps.Keys(c.Region.Labels)) {
			labels = append(labels, k+"="+c.Region.Labels[k])
		}
		project := c.Region.Project
		if project == "" {
			project = "-"
		}
		status, msg := clusterStatus(c)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Region.Name, c.Region.Server, project, orDash(labels), status, msg)
	}
	tw.Flush()
}

// clusterStatus asks the cluster's API server for its version, as Argo
// CD's connection status does.
func clusterStatus(c clusters.Cluster) (string, string) {
	if c.Err != nil {
		return "Failed", c.Err.Error()
	}
	rc := *c.Config
	rc.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(&rc)
	if err == nil {
		_, err = dc.ServerVersion()
	}
	if err != nil {
		return "Failed", err.Error()
	}
	return "Successful", ""
}

func newClusterRmCmd(cf *controlFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME|SERVER",
		Aliases: []string{"remove"},
		Short:   "Remove a cluster's Secret: its region goes from the workers",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			control, ns, err := clusterSecrets(cf)
			if err != nil {
				return err
			}
			list, err := clusters.List(cmd.Context(), control, ns)
			if err != nil {
				return err
			}
			want := strings.TrimSuffix(args[0], "/")
			var names []string
			for _, c := range list {
				if c.Region.Name == want || strings.TrimSuffix(c.Region.Server, "/") == want {
					_, secret, _ := strings.Cut(c.Secret, "/")
					if err := control.CoreV1().Secrets(ns).Delete(cmd.Context(), secret, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						return fmt.Errorf("delete cluster Secret %s: %w", c.Secret, err)
					}
					names = append(names, c.Secret)
				}
			}
			if len(names) == 0 {
				return fmt.Errorf("cluster %q not found: no cluster Secret of namespace %s has that name or server (ferry cluster list)", args[0], ns)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster %q removed (Secret %s)\n", args[0], strings.Join(names, ", "))
			return nil
		},
	}
}
