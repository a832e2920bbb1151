package app

import "github.com/ferry-gitops/ferry/internal/netpolicy"

// RepoCheck is the project's rule on the repositories a render of appName
// fetches because the source's files name them (remote Kustomize bases,
// chart dependencies, chart archives an index names elsewhere): those its
// sourceRepos allow. The built-in default project allows every repository
// (nil).
func (p *AppProject) RepoCheck(appName string) netpolicy.RepoCheck {
	if p == nil || p.IsBuiltIn() {
		return nil
	}
	return func(repoURL string) error {
		if p.PermitsRepo(repoURL) {
			return nil
		}
		return &netpolicy.RepoError{App: appName, Project: p.Metadata.Name}
	}
}
