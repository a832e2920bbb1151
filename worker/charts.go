package main

import (
	"fmt"
	"path/filepath"

	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

// newCharts builds the chart cache in --cache-dir/charts: Helm
// repositories and OCI registries, with the repository Secrets'
// credentials and the render sandbox's archive limits.
func newCharts(cfg *config, auth gitsource.AuthProvider, limits render.Limits, m *renderMetrics) (*chartsource.Charts, error) {
	opts := chartsource.Options{
		CacheDir:        filepath.Join(cfg.cacheDir, "charts"),
		MaxArchiveBytes: limits.MaxArchiveBytes,
		MaxFiles:        limits.MaxFiles,
		ArchiveFlag:     limits.Flags.ArchiveBytes,
		Observe:         m.gitRequest,
		Hosts:           cfg.render.hosts,
	}
	if rc, ok := auth.(*gitsource.RepoCreds); ok {
		opts.Credentials = chartCreds{rc}
	}
	charts, err := chartsource.New(opts)
	if err != nil {
		return nil, fmt.Errorf("chart cache in %s: %w", opts.CacheDir, err)
	}
	return charts, nil
}

// chartCreds gives charts the credentials of Argo CD's repository Secrets.
type chartCreds struct{ rc *gitsource.RepoCreds }

func (c chartCreds) ChartCredential(repoURL string) (chartsource.Credential, error) {
	cred, ok := c.rc.ChartCredential(repoURL)
	if !ok {
		return chartsource.Credential{}, nil
	}
	return chartsource.Credential{Username: cred.Username, Password: cred.Password, InsecureSkipVerify: cred.Insecure,
		CertPEM: cred.TLSCert, KeyPEM: cred.TLSKey, CAPEM: cred.CA, ForceHTTP: cred.ForceHTTP}, nil
}
