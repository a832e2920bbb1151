// Package devenv runs Ferry's real local stack: per region a Kubernetes
// control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) with a kwok fake kubelet and one fake Node, plus a Temporal
// dev server with its Web UI, Redis and a smart-HTTP Git server.
//
// Every test that needs the stack shares one per package:
//
//	var stack *devenv.Stack
//
//	func TestMain(m *testing.M) {
//		os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{"us-east-1"}}, &stack))
//	}
//
// `ferry dev up` runs the same stack until interrupted and writes DIR/env.
//
// Every process runs in its own process group with a parent-death signal,
// logs to DIR/logs/<name>.log and is killed as a group on Stop, so nothing
// outlives the stack, a failed test or a crashed parent.
package devenv
