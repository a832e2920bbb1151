package main

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// renderMode is ferry-worker render: the renderer process that a sandbox
// runs, one request on stdin, its answer on stdout (see sandbox.Serve).
func renderMode() int {
	if err := sandbox.Serve(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ferry-worker render:", err)
		return 1
	}
	return 0
}

// defaultSandboxPool is --render-sandbox-pool's default.
const defaultSandboxPool = 2

// defaultSandboxReuse is --render-sandbox-reuse's default: a new commit
// of a repository that 100 apps render starts one sandbox, not 100.
const defaultSandboxReuse = 100

// sandboxFlag is --render-sandbox: a sandbox.Mode; empty means the
// default.
type sandboxFlag struct{ mode sandbox.Mode }

func (f *sandboxFlag) String() string { return string(f.mode) }
func (f *sandboxFlag) Set(v string) error {
	m, err := sandbox.ParseMode(v)
	if err != nil {
		return err
	}
	f.mode = m
	return nil
}

// bytesFlag is a size in bytes written as a Kubernetes quantity: 512Mi,
// 2Gi.
type bytesFlag int64

func (b *bytesFlag) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *bytesFlag) Set(v string) error {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("%q is not a size: write one such as 512Mi or 2Gi", v)
	}
	*b = bytesFlag(q.Value())
	return nil
}

// newSandboxInfo is the metric that names the render sandbox in force.
func newSandboxInfo(reg prometheus.Registerer) *prometheus.GaugeVec {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ferry_render_sandbox_info", Help: "The render sandbox in force (--render-sandbox): gvisor, process, pod or none; for gvisor, runsc's platform (--runsc-platform).",
	}, []string{"mode", "platform"})
	reg.MustRegister(info)
	return info
}
