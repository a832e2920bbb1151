package devenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
)

// ChartServers are a stack's Helm chart repository and OCI registry
// without the rest, for the tests of packages that read charts.
type ChartServers struct {
	HelmRepoURL string
	OCIRegistry string // host:port
	Target      PublishTarget
	helm        *helmRepo
	registry    *proc
	ports       *portReservation
}

// StartChartServers runs a Helm repository (with basic auth when user is
// set) and an OCI registry on stateDir, which must exist; toolsBin as in
// Options (empty: $FERRY_TOOLS_BIN, else hack/tools.sh).
func StartChartServers(ctx context.Context, stateDir, toolsBin, user, pass string) (*ChartServers, error) {
	bin, err := resolveToolsBin(ctx, toolsBin, os.Stderr)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(stateDir, "logs"), 0o755); err != nil {
		return nil, err
	}
	cs := &ChartServers{}
	if cs.helm, err = startHelmRepo(stateDir, user, pass); err != nil {
		return nil, err
	}
	ports, res, err := freePorts(1)
	if err != nil {
		return nil, errors.Join(err, cs.Stop())
	}
	cs.ports = res
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	p, err := startRegistry(ctx, stateDir, bin, env, ports[0])
	cs.registry = p
	if err != nil {
		return nil, errors.Join(err, cs.Stop())
	}
	cs.HelmRepoURL, cs.OCIRegistry = cs.helm.url, hostPort(ports[0])
	cs.Target = PublishTarget{HelmDir: cs.helm.dir, OCIRegistry: cs.OCIRegistry}
	return cs, nil
}

// IndexFetches is how many times the repository sent its index.yaml (304
// answers not counted); IndexNotModified how many it answered 304.
func (cs *ChartServers) IndexFetches() int64     { return cs.helm.indexFetches.Load() }
func (cs *ChartServers) IndexNotModified() int64 { return cs.helm.indexNotModified.Load() }

// Stop stops both servers.
func (cs *ChartServers) Stop() error {
	var errs []error
	if cs.registry != nil {
		errs = append(errs, cs.registry.stop(stopGrace))
	}
	if cs.helm != nil {
		errs = append(errs, cs.helm.stop())
	}
	if cs.ports != nil {
		errs = append(errs, cs.ports.release())
	}
	return errors.Join(errs...)
}
