package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/kube"
)

// manyConfigMaps returns n small ConfigMaps.
func manyConfigMaps(n int) []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, n)
	for i := range objs {
		objs[i] = configMap(fmt.Sprintf("cm-%04d", i), map[string]string{"tier": "bench"}, nil)
	}
	return objs
}

// BenchmarkCompare1000 compares a 1,000-object app that is in sync: with
// a Get and a dry run per object (no caches), with the incremental compare
// only (a Get per object), and with the live cache warm (informers): the
// requests it sends are reported as requests/op.
func BenchmarkCompare1000(b *testing.B) {
	e := newEnv(b)
	objs := manyConfigMaps(1000)
	_, err := e.apply(objs, nil)
	require.NoError(b, err)
	req := kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs}
	noResults := kube.DefaultOptions()
	noResults.CompareCacheTTL = 0
	for _, bc := range []struct {
		name string
		opts kube.Options
		live bool
	}{
		{"get+dry-run", noResults, false},
		{"get+incremental", kube.DefaultOptions(), false},
		{"informer+incremental", kube.DefaultOptions(), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cluster, requests := e.countingCluster(bc.opts, bc.live, nil)
			if _, err := cluster.Compare(ctx, req); err != nil { // warm up: discovery, informers, results
				b.Fatal(err)
			}
			if bc.live && !cluster.WaitSynced(ctx) {
				b.Fatal("informers did not sync")
			}
			if _, err := cluster.Compare(ctx, req); err != nil {
				b.Fatal(err)
			}
			requests.Store(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				states, err := cluster.Compare(ctx, req)
				if err != nil || len(states) != len(objs) {
					b.Fatalf("compare: %d states, %v", len(states), err)
				}
			}
			b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
		})
	}
}

// BenchmarkSync500 syncs 500 new objects with Ferry and with `kubectl
// apply --server-side` of the same manifests, each into a fresh namespace
// of the same cluster in the same iteration, and reports both times and
// their ratio (ferry/kubectl: below 1 is Ferry faster).
func BenchmarkSync500(b *testing.B) {
	e := newEnv(b)
	kubectl := filepath.Join(stack.ToolsBin, "kubectl")
	objs := manyConfigMaps(500)
	var docs []string
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		require.NoError(b, err)
		docs = append(docs, string(data))
	}
	file := filepath.Join(b.TempDir(), "objs.yaml")
	require.NoError(b, os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o644))
	// Ferry as a region worker runs it: its live cache already watches
	// ConfigMaps (another app uses them), so it learns that the objects are
	// new without asking.
	cluster, requests := e.countingCluster(kube.DefaultOptions(), true, nil)
	warm := []*unstructured.Unstructured{configMap("warm", nil, nil)}
	_, err := cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: warm})
	require.NoError(b, err)
	require.True(b, cluster.WaitSynced(e.ctx))
	requests.Store(0)
	var ferryTime, kubectlTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nsFerry, nsKubectl := e.ns+fmt.Sprintf("-f%d", i), e.ns+fmt.Sprintf("-k%d", i)
		for _, ns := range []string{nsFerry, nsKubectl} {
			e.namespace(ns)
		}
		b.StartTimer()
		start := time.Now()
		_, err := cluster.Apply(e.ctx, kube.ApplyRequest{App: nsFerry, Namespace: nsFerry, Objects: objs})
		ferryTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		out, err := exec.Command(kubectl, "--kubeconfig", stack.Kubeconfig, "--context", region, "apply", "--server-side",
			"--field-manager", "bench", "-n", nsKubectl, "-f", file).CombinedOutput()
		kubectlTime += time.Since(start)
		if err != nil {
			b.Fatalf("kubectl: %v: %s", err, out)
		}
	}
	b.ReportMetric(float64(ferryTime.Milliseconds())/float64(b.N), "ferry-ms/op")
	b.ReportMetric(float64(kubectlTime.Milliseconds())/float64(b.N), "kubectl-ms/op")
	b.ReportMetric(ferryTime.Seconds()/kubectlTime.Seconds(), "ferry/kubectl")
	b.ReportMetric(float64(requests.Load())/float64(b.N), "ferry-requests/op")
}

// namespace creates a namespace, deleted when the test ends.
func (e *env) namespace(name string) {
	e.t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	_, err := e.dyn.Resource(namespaces).Create(e.ctx, ns, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = e.dyn.Resource(namespaces).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}
