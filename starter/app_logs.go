package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
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

// workloadKinds are the kinds whose pods a selector names.
var workloadKinds = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true,
	"apps/ReplicaSet": true, "batch/Job": true,
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
one container, each line starts with [region namespace/pod container].`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogs(cmd.Context(), tf, f, args[0], cmd.OutOrStdout())
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

// logStream is one container of one pod.
type logStream struct {
	region, namespace, pod, container string
	client                            kubernetes.Interface
}

func runLogs(ctx context.Context, tf *temporalFlags, f *logsFlags, name string, out io.Writer) error {
	c, err := tf.dial(ctx)
	if err != nil {
		return err
	}
	v, err := queryApp(ctx, c, name)
	c.Close()
	if err != nil {
		return err
	}
	var streams []logStream
	var failed []error
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) > 0 && !contains(f.regions, d.Region) {
			continue
		}
		s, err := regionStreams(ctx, f, d.Region, v)
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
func regionStreams(ctx context.Context, f *logsFlags, region string, v *contract.View) ([]logStream, error) {
	cfg, err := kube.LoadConfig(f.kubeconfig, region)
	if err != nil {
		return nil, fmt.Errorf("%w (the ferry CLI reads each region through the kubeconfig context named after it)", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cluster, err := kube.NewCluster(cfg)
	if err != nil {
		return nil, err
	}
	pods := map[string]corev1.Pod{}
	var failed []error
	for _, r := range v.Status.Resources {
		if r.Region != region || !f.selects(r.ResourceKey) {
			continue
		}
		found, err := podsOf(ctx, cluster, cs, r.ResourceKey)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s %s: %w", kindOf(r.ResourceKey), objectName(r.ResourceKey), err))
		}
		for _, p := range found {
			pods[p.Namespace+"/"+p.Name] = p
		}
	}
	var streams []logStream
	for _, key := range sortedKeys(pods) {
		p := pods[key]
		for _, ctr := range p.Spec.Containers {
			if f.container == "" || f.container == ctr.Name {
				streams = append(streams, logStream{region: region, namespace: p.Namespace, pod: p.Name, container: ctr.Name, client: cs})
			}
		}
	}
	return streams, errors.Join(failed...)
}

func (f *logsFlags) selects(k app.ResourceKey) bool {
	gk := k.Group + "/" + k.Kind
	if f.kind == "" && !workloadKinds[gk] && gk != "/Pod" {
		return false
	}
	return (f.kind == "" || f.kind == k.Kind) && (f.group == "" || f.group == k.Group) &&
		(f.name == "" || f.name == k.Name) && (f.namespace == "" || f.namespace == k.Namespace)
}

// podsOf returns the pods k is or selects.
func podsOf(ctx context.Context, cluster *kube.Cluster, cs kubernetes.Interface, k app.ResourceKey) ([]corev1.Pod, error) {
	if k.Group == "" && k.Kind == "Pod" {
		p, err := cs.CoreV1().Pods(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return []corev1.Pod{*p}, nil
	}
	if !workloadKinds[k.Group+"/"+k.Kind] {
		return nil, fmt.Errorf("has no pods: give a Pod or a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job")
	}
	obj, err := getLive(ctx, cluster, k)
	if err != nil || obj == nil {
		return nil, err
	}
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return nil, fmt.Errorf("has no spec.selector")
	}
	var sel metav1.LabelSelector
	if err := runtimeFromUnstructured(raw, &sel); err != nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return nil, err
	}
	list, err := cs.CoreV1().Pods(k.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// printLogs copies every stream to out, line by line; with --follow they
// run at once, else one after another.
func printLogs(ctx context.Context, f *logsFlags, streams []logStream, out io.Writer) error {
	var mu sync.Mutex
	prefix := len(streams) > 1
	copyStream := func(s logStream) error {
		opts := &corev1.PodLogOptions{Container: s.container, Follow: f.follow, Previous: f.previous}
		if f.tail >= 0 {
			opts.TailLines = &f.tail
		}
		if f.since > 0 {
			secs := int64(f.since.Seconds())
			opts.SinceSeconds = &secs
		}
		rc, err := s.client.CoreV1().Pods(s.namespace).GetLogs(s.pod, opts).Stream(ctx)
		if err != nil {
			return fmt.Errorf("logs of %s/%s container %s in %s: %w", s.namespace, s.pod, s.container, s.region, err)
		}
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			if prefix {
				fmt.Fprintf(out, "[%s %s/%s %s] ", s.region, s.namespace, s.pod, s.container)
			}
			fmt.Fprintln(out, sc.Text())
			mu.Unlock()
		}
		return sc.Err()
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func runtimeFromUnstructured(raw map[string]any, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(raw, out)
}
