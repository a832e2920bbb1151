package appset

import "github.com/ferry-gitops/ferry/internal/regions"

// ClustersOf are the regions of a regions configuration as the clusters
// generator yields them, with their labels, annotations and server URL
// (Argo CD's in-cluster address for the in-cluster region).
func ClustersOf(rc *regions.Config) []Cluster {
	var out []Cluster
	for _, r := range rc.Regions() {
		c := Cluster{Name: r.Name, Server: r.Server, Labels: r.Labels, Annotations: r.Annotations}
		if r.InCluster {
			c.Server = regions.InClusterServer
		}
		out = append(out, c)
	}
	return out
}
