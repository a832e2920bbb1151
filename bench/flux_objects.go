package bench

// Flux's objects as the benchmarks write them (GitRepository, Kustomization,
// Flux's CRDs), and what the scenarios read back: Ready conditions,
// applied revisions, the controllers' reconcile counters.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var (
	crdResource           = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gitRepositoryResource = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}
	kustomizationResource = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
)

// reconcileRequestAnnotation is what `flux reconcile` sets to a new value
// to have a controller reconcile an object now.
const reconcileRequestAnnotation = "reconcile.fluxcd.io/requestedAt"

// installCRDs applies every CRD file of dir server-side and waits until
// each is Established.
func (f *Flux) installCRDs(ctx context.Context, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("Flux's CRDs: none in %s (run hack/tools.sh flux)", dir)
	}
	var names []string
	for _, file := range files {
		objs, err := readObjects(file)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if _, err := f.dyn.Resource(crdResource).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "ferry-bench", Force: true}); err != nil {
				return fmt.Errorf("apply CRD %s to %s: %w", obj.GetName(), f.Region, err)
			}
			names = append(names, obj.GetName())
		}
	}
	for _, name := range names {
		err := poll(ctx, 100*time.Millisecond, time.Minute, func() (bool, error) {
			crd, err := f.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			status, _ := condition(crd, "Established")
			return status == "True", nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not Established in %s: %w", name, f.Region, err)
		}
	}
	return nil
}

// readObjects decodes every YAML document of a file.
func readObjects(file string) ([]*unstructured.Unstructured, error) {
	r, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Base(file), err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// createGitRepository creates a GitRepository of the main branch of url.
func (f *Flux) createGitRepository(ctx context.Context, name, url string, interval time.Duration) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1",
		"kind":       "GitRepository",
		"metadata":   map[string]any{"name": name, "namespace": fluxNamespace},
		"spec": map[string]any{
			"url":      url,
			"interval": interval.String(),
			"ref":      map[string]any{"branch": "main"},
		},
	}}
	if _, err := f.dyn.Resource(gitRepositoryResource).Namespace(fluxNamespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create GitRepository %s/%s: %w", fluxNamespace, name, err)
	}
	return nil
}

// fluxApp is a Kustomization with what Ferry's benchmark apps do: prune,
// wait for health, every object in one target namespace.
type fluxApp struct {
	Name, Source, Path, Namespace string
	Interval                      time.Duration
}

func (f *Flux) createKustomization(ctx context.Context, a fluxApp) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]any{"name": a.Name, "namespace": fluxNamespace},
		"spec": map[string]any{
			"interval":        a.Interval.String(),
			"path":            "./" + strings.TrimPrefix(a.Path, "./"),
			"prune":           true,
			"wait":            true,
			"timeout":         "5m",
			"targetNamespace": a.Namespace,
			"sourceRef":       map[string]any{"kind": "GitRepository", "name": a.Source},
		},
	}}
	if _, err := f.dyn.Resource(kustomizationResource).Namespace(fluxNamespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Kustomization %s/%s: %w", fluxNamespace, a.Name, err)
	}
	return nil
}

// requestReconcile annotates an object as `flux reconcile` does.
func (f *Flux) requestReconcile(ctx context.Context, gvr schema.GroupVersionResource, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, reconcileRequestAnnotation, time.Now().Format(time.RFC3339Nano))
	if _, err := f.dyn.Resource(gvr).Namespace(fluxNamespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("request a reconcile of %s %s/%s: %w", gvr.Resource, fluxNamespace, name, err)
	}
	return nil
}

// readyAt reports whether an object's Ready condition is True for its
// current generation, with a revision (status.artifact.revision of a
// GitRepository, status.lastAppliedRevision of a Kustomization) naming sha.
func readyAt(obj *unstructured.Unstructured, sha string) bool {
	if status, _ := condition(obj, "Ready"); status != "True" {
		return false
	}
	if gen, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); found && gen != obj.GetGeneration() {
		return false
	}
	rev, _, _ := unstructured.NestedString(obj.Object, "status", "lastAppliedRevision")
	if obj.GetKind() == "GitRepository" {
		rev, _, _ = unstructured.NestedString(obj.Object, "status", "artifact", "revision")
	}
	return sha == "" && rev != "" || sha != "" && strings.HasSuffix(rev, sha)
}

// fluxWait is what waitReady saw: when the object was Ready, and when a
// Kustomization's health check for the commit was first seen running
// (zero if no read caught it), which is when its apply had finished.
type fluxWait struct {
	Ready, HealthCheck time.Time
}

// waitReady polls an object until readyAt, every interval.
func (f *Flux) waitReady(ctx context.Context, gvr schema.GroupVersionResource, name, sha string, interval time.Duration) (fluxWait, error) {
	var w fluxWait
	var last *unstructured.Unstructured
	for {
		obj, err := f.dyn.Resource(gvr).Namespace(fluxNamespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if readyAt(obj, sha) {
				w.Ready = time.Now()
				return w, nil
			}
			if status, msg := condition(obj, "Healthy"); w.HealthCheck.IsZero() && status == "Unknown" && sha != "" && strings.Contains(msg, sha) {
				w.HealthCheck = time.Now()
			}
			last = obj
		}
		if err := f.Exited(); err != nil {
			return w, err
		}
		select {
		case <-ctx.Done():
			return w, fmt.Errorf("%s %s/%s not Ready at %s: %w (last seen: %s)", gvr.Resource, fluxNamespace, name, short(sha), ctx.Err(), describeFlux(last))
		case <-time.After(interval):
		}
	}
}

// describeFlux is an object's Ready condition, for errors.
func describeFlux(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "nothing"
	}
	status, msg := condition(obj, "Ready")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Sprintf("Ready=%s %s", status, msg)
}

// condition returns a condition's status and message.
func condition(obj *unstructured.Unstructured, kind string) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == kind {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return s, msg
		}
	}
	return "", ""
}

// markReady adds to seen the Kustomizations of fluxNamespace that are
// readyAt sha now. A busy kustomize-controller turns Ready to Unknown
// while it reconciles again, so a fleet is Ready once each has been.
func (f *Flux) markReady(ctx context.Context, sha string, seen map[string]bool) error {
	list, err := f.dyn.Resource(kustomizationResource).Namespace(fluxNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		if readyAt(&list.Items[i], sha) {
			seen[list.Items[i].GetName()] = true
		}
	}
	return nil
}

// reconciles is controller-runtime's count of a controller's finished
// reconciles (controller_runtime_reconcile_total, every result) on a
// Flux controller's /metrics.
func (p *fluxProc) reconciles(controller string) (float64, error) {
	resp, err := http.Get("http://" + p.metricsAddr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape %s's metrics: %w", p.name, err)
	}
	defer resp.Body.Close()
	return sumMetricWhere(resp.Body, "controller_runtime_reconcile_total", "controller", controller)
}

// sumMetricWhere adds the samples of name whose label key has value
// (every sample of name when key is "").
func sumMetricWhere(r io.Reader, name, key, value string) (float64, error) {
	sum, found := 0.0, false
	for labels, v := range readSamples(r)[name] {
		if key == "" || parseLabels(labels)[key] == value {
			sum, found = sum+v, true
		}
	}
	if !found {
		return 0, fmt.Errorf("no %s{%s=%q} on the metrics endpoint", name, key, value)
	}
	return sum, nil
}

// poll calls check every interval until it says done, fails, or limit
// passes; errors from check only end the wait at the limit.
func poll(ctx context.Context, interval, limit time.Duration, check func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		done, err := check()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("timed out")
			}
			return fmt.Errorf("after %s: %w", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
