package devenv

import (
	"fmt"
	"os"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// Labels of every region in the stack's regions configuration, as an Argo
// CD cluster Secret carries them for ApplicationSet's clusters generator.
const (
	// RegionLabel holds the region's name.
	RegionLabel = "topology.kubernetes.io/region"
	// StackLabel says the region is one of a dev stack's.
	StackLabel = "ferry.dev/stack"
)

// regionsFile is the stack's regions configuration (the workers'
// --regions-config): each region with its API server's URL and labels, the
// first one Argo CD's in-cluster destination, as make run's worker maps it.
func (s *Stack) regionsFile() regions.File {
	var f regions.File
	for i, r := range s.regionOrder {
		f.Regions = append(f.Regions, regions.Region{
			Name: r.name, Server: r.server, InCluster: i == 0,
			Labels: map[string]string{RegionLabel: r.name, StackLabel: "dev"},
		})
	}
	return f
}

// writeRegionsConfig writes regionsFile to path; with no regions it writes
// nothing.
func (s *Stack) writeRegionsConfig(path string) error {
	if len(s.regionOrder) == 0 {
		return nil
	}
	f := s.regionsFile()
	if _, err := regions.New(f.Regions); err != nil {
		return fmt.Errorf("regions configuration: %w", err)
	}
	data, err := f.Marshal()
	if err != nil {
		return fmt.Errorf("regions configuration: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write regions configuration: %w", err)
	}
	s.RegionsConfig = path
	return nil
}
