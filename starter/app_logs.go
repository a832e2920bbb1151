package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// `ferry app logs` streams the logs of the app's pods, read through the
// kubeconfig as kubectl logs reads them; no log line passes through a
// workflow.

type logsFlags struct {
	kubeconfig, group, kind, name, namespace, container string
	regions                                             []string
	tail                                                int64
	since                                               time.Duration
	follow, previous                                    bool
}

func newLogsCmd(tf *temporalFlags) *cobra.Command {
	f := &logsFlags{}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the logs of the app's pods, per region",
		Long: `Print the logs of the pods of the app's resources: a Pod, or the pods a
Deployment, StatefulSet, DaemonSet, ReplicaSet or Job selects, as argocd app
logs does. Without --kind and --name, every such resource of the app. Each
region is read through the kubeconfig context named after it. With more than
one container, each line starts with [region namespace/pod container].

Once you are logged in (ferry login), the logs come through ferry-server,
which reads the regions with your rights (logs get); --kubeconfig is then
refused. Lines are prefixed once a second container's come; with --follow,
unless --kind Pod, --name and --container name a single container of the
app.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return throughDoor(func() error { return runLogs(cmd.Context(), tf, f, args[0], cmd.OutOrStdout()) },
				func(a *api) error { return doorLogs(cmd, a, f, args[0]) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig with one context per region (default $KUBECONFIG)")
	fl.StringVar(&f.group, "group", "", "API group of the resource (default: any)")
	fl.StringVar(&f.kind, "kind", "", "kind of the resource, e.g. Deployment (default: every workload of the app)")
	fl.StringVar(&f.name, "name", "", "name of the resource")
	fl.StringVar(&f.namespace, "namespace", "", "namespace of the resource")
	fl.StringVarP(&f.container, "container", "c", "", "only this container (default: every container)")
	fl.StringSliceVar(&f.regions, "region", nil, "only these regions (default: every destination)")
	fl.Int64Var(&f.tail, "tail", -1, "the last N lines of each container (default: all)")
	fl.DurationVar(&f.since, "since", 0, "only lines newer than this, e.g. 10m")
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep streaming new lines")
	fl.BoolVarP(&f.previous, "previous", "p", false, "the logs of the previous instance of each container")
	return cmd
}

// logStream is one container of one pod, and the region it runs in.
type logStream struct {
	c      regionlive.Container
	region *regionlive.Region
}

func runLogs(ctx context.Context, tf *temporalFlags, f *logsFlags, name string, out io.Writer) error {
	v, err := tf.queryOnce(ctx, name)
	if err != nil {
		return err
	}
	rs := &regionlive.Regions{Kubeconfig: f.kubeconfig}
	var streams []logStream
	var failed []error
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) > 0 && !contains(f.regions, d.Region) {
			continue
		}
		s, err := regionStreams(ctx, f, rs, d.Region, v)
		streams = append(streams, s...)
		if err != nil {
			failed = append(failed, fmt.Errorf("region %s: %w", d.Region, err))
		}
	}
	if len(streams) == 0 && len(failed) == 0 {
		return fmt.Errorf("app %q: no pods match (give --kind and --name of a Pod or a workload the app deploys; see ferry app get %s)", name, name)
	}
	failed = append(failed, printLogs(ctx, f, streams, out))
	return errors.Join(failed...)
}

// regionStreams finds the containers whose logs are asked for in region.
func regionStreams(ctx context.Context, f *logsFlags, rs *regionlive.Regions, region string, v *contract.View) ([]logStream, error) {
	r, err := openRegion(rs, region)
	if err != nil {
		return nil, err
	}
	var keys []app.ResourceKey
	for _, res := range v.Status.Resources {
		if res.Region == region && f.selects(res.ResourceKey) {
			keys = append(keys, res.ResourceKey)
		}
	}
	containers, err := r.Containers(ctx, keys, f.container)
	streams := make([]logStream, 0, len(containers))
	for _, c := range containers {
		streams = append(streams, logStream{c: c, region: r})
	}
	return streams, err
}

func (f *logsFlags) selects(k app.ResourceKey) bool {
	if f.kind == "" && !regionlive.IsWorkload(k) {
		return false
	}
	return (f.kind == "" || f.kind == k.Kind) && (f.group == "" || f.group == k.Group) &&
		(f.name == "" || f.name == k.Name) && (f.namespace == "" || f.namespace == k.Namespace)
}

// printLogs copies every stream to out, line by line; with --follow they
// run at once, else one after another.
func printLogs(ctx context.Context, f *logsFlags, streams []logStream, out io.Writer) error {
	var mu sync.Mutex
	prefix := len(streams) > 1
	opts := regionlive.LogOptions{Follow: f.follow, Previous: f.previous, Tail: f.tail, Since: f.since}
	copyStream := func(s logStream) error {
		return s.region.Logs(ctx, s.c, opts, func(text string, _ time.Time) {
			mu.Lock()
			defer mu.Unlock()
			if prefix {
				fmt.Fprintf(out, "[%s %s/%s %s] ", s.c.Region, s.c.Namespace, s.c.Pod, s.c.Container)
			}
			fmt.Fprintln(out, text)
		})
	}
	errs := make([]error, len(streams))
	if !f.follow {
		for i, s := range streams {
			errs[i] = copyStream(s)
		}
		return errors.Join(errs...)
	}
	var wg sync.WaitGroup
	for i, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = copyStream(s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
