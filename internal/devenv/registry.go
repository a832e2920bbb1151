package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

const registryTimeout = 30 * time.Second

// registryConfig is the CNCF distribution registry's configuration: plain
// HTTP on a loopback port, blobs under DIR/registry, no auth (the stack is
// reachable from this machine only).
const registryConfig = `version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: %q
  delete:
    enabled: true
http:
  addr: %q
  secret: ferry-dev-registry
`

// startRegistry runs the distribution registry (the tools bin dir's
// registry) on a loopback port, and returns once /v2/ answers.
func startRegistry(ctx context.Context, stateDir, toolsBin string, env []string, port int) (*proc, error) {
	dir := filepath.Join(stateDir, "registry")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("oci registry: %w", err)
	}
	addr := hostPort(port)
	cfg := filepath.Join(stateDir, "registry.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, registryConfig, dir, addr), 0o644); err != nil {
		return nil, fmt.Errorf("oci registry: %w", err)
	}
	p, err := startProc("registry", filepath.Join(stateDir, "logs"), dir, env, filepath.Join(toolsBin, "registry"), "serve", cfg)
	if err != nil {
		return nil, err
	}
	return p, p.waitReady(ctx, "oci registry", registryTimeout, answersOK("http://"+addr+"/v2/"))
}
