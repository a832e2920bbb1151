package regions

// Snapshot is a Config as data: what a workflow records in its history, so
// that a run replays with the regions it ran with, whatever the worker
// replaying it was started with.
type Snapshot struct {
	// Open: any well-formed region name is accepted; InCluster is then the
	// in-cluster region's name.
	Open      bool   `json:"open,omitempty"`
	InCluster string `json:"inCluster,omitempty"`
	// Regions are the configured regions, in order; when Open, the regions
	// of cluster Secrets alone.
	Regions []Region `json:"regions,omitempty"`
}

// Snapshot is c as data; Config turns it back.
func (c *Config) Snapshot() Snapshot {
	if c = c.now(); c == nil {
		return Snapshot{Open: true, InCluster: InClusterName}
	}
	if c.open {
		return Snapshot{Open: true, InCluster: c.openInCluster, Regions: c.Regions()}
	}
	return Snapshot{Regions: c.Regions()}
}

// Config is the Config the snapshot was taken of.
func (s Snapshot) Config() (*Config, error) {
	if s.Open {
		return openWith(s.InCluster, s.Regions), nil
	}
	return New(s.Regions)
}
