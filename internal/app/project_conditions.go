package app

import (
	"fmt"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// ConditionInvalidSpecError is Argo CD's condition type for an app whose
// spec its project does not permit (or that names no existing project).
const ConditionInvalidSpecError = "InvalidSpecError"

// PermissionConditions are the messages of the InvalidSpecError conditions
// Argo CD's controller sets, at every refresh, on an app its project no
// longer permits (util/argo ValidatePermissions, in its words): one per
// source repository outside sourceRepos, one per destination outside
// destinations. None: the project permits the app. A destination is named
// by its name when it has one (a region), else by its server, as Argo CD
// names the cluster.
func (p *AppProject) PermissionConditions(repos []string, dests []Destination, rc *regions.Config) []string {
	var out []string
	for _, repo := range repos {
		if !p.PermitsRepo(repo) {
			out = append(out, fmt.Sprintf("application repo %s is not permitted in project '%s'", repo, p.Metadata.Name))
		}
	}
	for _, d := range dests {
		if p.permits(identityOfDestination(d, rc), d.Namespace) {
			continue
		}
		server := d.Server
		if d.Name != "" {
			server = d.Name
		}
		out = append(out, fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
			server, d.Namespace, p.Metadata.Name))
	}
	return out
}

// MissingProjectCondition is Argo CD's InvalidSpecError message for an app
// whose project does not exist.
func MissingProjectCondition(project string) string {
	return fmt.Sprintf("Application referencing project %s which does not exist", project)
}

// RepoURLs are the repositories of the app's sources, in order.
func (a *Application) RepoURLs() []string {
	var out []string
	for _, s := range a.SourceList() {
		out = append(out, s.RepoURL)
	}
	return out
}
