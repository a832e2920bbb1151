package regionlive

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ferry-gitops/ferry/internal/app"
)

// workloadKinds are the kinds whose pods a selector names.
var workloadKinds = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true,
	"apps/ReplicaSet": true, "batch/Job": true,
}

// IsWorkload tells whether k has pods: a Pod, or a kind whose pods its
// spec.selector names (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job).
func IsWorkload(k app.ResourceKey) bool {
	return (k.Group == "" && k.Kind == "Pod") || workloadKinds[k.Group+"/"+k.Kind]
}

// Pods returns the pods k is or selects; none when k is gone.
func (r *Region) Pods(ctx context.Context, k app.ResourceKey) ([]corev1.Pod, error) {
	if k.Group == "" && k.Kind == "Pod" {
		p, err := r.Client.CoreV1().Pods(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return []corev1.Pod{*p}, nil
	}
	if !workloadKinds[k.Group+"/"+k.Kind] {
		return nil, errors.New("has no pods: give a Pod or a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job")
	}
	obj, err := r.Get(ctx, k)
	if err != nil || obj == nil {
		return nil, err
	}
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return nil, errors.New("has no spec.selector")
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return nil, err
	}
	list, err := r.Client.CoreV1().Pods(k.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// LogOptions choose the lines of a container's log, as kubectl logs does.
type LogOptions struct {
	// Container is the only container whose log Containers lists; "": every one.
	Container string
	// Follow keeps streaming new lines until ctx ends or the container stops.
	Follow bool
	// Previous reads the log of the container's previous instance.
	Previous bool
	// Tail is the last lines to read; below zero: all.
	Tail int64
	// Since keeps only lines newer than this; zero: all.
	Since time.Duration
}

// Container is one container of one pod of a region.
type Container struct {
	Region, Namespace, Pod, Container string
}

// Containers lists the containers of the pods of keys (every container, or
// only the one called container): pods deduplicated and sorted by
// namespace/pod. A resource whose pods cannot be read adds "Kind ns/name:
// err" to the error and leaves the others listed.
func (r *Region) Containers(ctx context.Context, keys []app.ResourceKey, container string) ([]Container, error) {
	pods := map[string]corev1.Pod{}
	var failed []error
	for _, k := range keys {
		found, err := r.Pods(ctx, k)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", describe(k), err))
		}
		for _, p := range found {
			pods[p.Namespace+"/"+p.Name] = p
		}
	}
	names := make([]string, 0, len(pods))
	for n := range pods {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Container
	for _, n := range names {
		p := pods[n]
		for _, c := range p.Spec.Containers {
			if container == "" || container == c.Name {
				out = append(out, Container{Region: r.Name, Namespace: p.Namespace, Pod: p.Name, Container: c.Name})
			}
		}
	}
	return out, errors.Join(failed...)
}

// Logs streams one container's log, calling line for each line with the
// time the kubelet stamped on it, until the log ends (or, with Follow, ctx
// does). o.Container is ignored: c names the container.
func (r *Region) Logs(ctx context.Context, c Container, o LogOptions, line func(text string, at time.Time)) error {
	opts := &corev1.PodLogOptions{Container: c.Container, Follow: o.Follow, Previous: o.Previous, Timestamps: true}
	if o.Tail >= 0 {
		tail := o.Tail
		opts.TailLines = &tail
	}
	if o.Since > 0 {
		secs := int64(o.Since.Seconds())
		opts.SinceSeconds = &secs
	}
	rc, err := r.Client.CoreV1().Pods(c.Namespace).GetLogs(c.Pod, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s/%s container %s in %s: %w", c.Namespace, c.Pod, c.Container, c.Region, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line(splitTimestamp(sc.Text()))
	}
	return sc.Err()
}

// splitTimestamp takes the RFC3339Nano time the kubelet puts before each
// line (PodLogOptions.Timestamps) off it; a line without one is kept whole,
// with the zero time.
func splitTimestamp(s string) (string, time.Time) {
	stamp, text, ok := strings.Cut(s, " ")
	if !ok {
		stamp, text = s, ""
	}
	at, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return s, time.Time{}
	}
	return text, at
}
