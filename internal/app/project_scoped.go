package app

import "fmt"

// Project-scoped regions follow Argo CD's project-scoped clusters: a region
// names the project it belongs to in the regions configuration
// (regions.Region.Project), as a cluster Secret's project field does.
//
//   - A region scoped to a project is an implicit destination of the
//     project, every namespace of it: its apps may deploy there even when
//     spec.destinations does not list it (Argo CD adds {server, namespace:
//     "*"} for each cluster of the project when it reads the project). A
//     deny entry of spec.destinations still excludes it.
//   - With spec.permitOnlyProjectScopedClusters, a destination must match
//     the project's destinations and be a region scoped to the project.
//
// Without a regions configuration (a nil *regions.Config: the CLI, which
// checks before the workers do) no region is known to be scoped: the
// destinations written in the project are checked, and
// permitOnlyProjectScopedClusters is left to the workers, which know the
// regions.

// scopes reports whether the region is scoped to the project.
func (p *AppProject) scopes(id regionIdentity) bool {
	return id.project != "" && id.project == p.Metadata.Name
}

// unscopedReason says why a project with permitOnlyProjectScopedClusters
// refuses region, and what to do.
func (p *AppProject) unscopedReason(region string) string {
	return fmt.Sprintf("region %s is not scoped to project %q, which permits only project-scoped clusters: "+
		"set project: %s on region %s in the regions configuration (--regions-config), or remove permitOnlyProjectScopedClusters from the project",
		region, p.Metadata.Name, p.Metadata.Name, region)
}

// unscopedRegion is the problem a ProjectError names for a destination in
// a region not scoped to the project.
func (p *AppProject) unscopedRegion(region, namespace string) string {
	return fmt.Sprintf("destination %s/%s (permitOnlyProjectScopedClusters: %s)", region, namespace, p.unscopedReason(region))
}
