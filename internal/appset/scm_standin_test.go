package appset

import (
	"context"
	"errors"
	"testing"

	"github.com/ferry-gitops/ferry/internal/scm"
	"github.com/ferry-gitops/ferry/internal/scm/scmtest"
)

const (
	testToken = "t0k3n-never-shown"
	shaA      = "0123456789abcdef0123456789abcdef01234567"
	shaB      = "89abcdef0123456789abcdef0123456789abcdef"
)

// standInSCM is SCMClients with every generator's api pointed at the
// stand-in, and each tokenRef read as testToken (but Secret "missing",
// which is not found).
type standInSCM struct{ s *scmtest.Server }

func (c standInSCM) clients() *SCMClients {
	return &SCMClients{Token: func(_ context.Context, ref SecretRef) (string, error) {
		if ref.SecretName == "missing" {
			return "", errors.New(`Secret "` + ref.SecretName + `" not found`)
		}
		return testToken, nil
	}}
}

func (c standInSCM) PullRequests(ctx context.Context, g *PullRequestGenerator) (scm.PullRequests, error) {
	cp := *g
	switch {
	case cp.Github != nil:
		p := *cp.Github
		p.API, cp.Github = c.s.URL, &p
	case cp.GitLab != nil:
		p := *cp.GitLab
		p.API, cp.GitLab = c.s.URL, &p
	case cp.Gitea != nil:
		p := *cp.Gitea
		p.API, cp.Gitea = c.s.URL, &p
	}
	return c.clients().PullRequests(ctx, &cp)
}

func (c standInSCM) Repositories(ctx context.Context, g *SCMProviderGenerator) (scm.Repositories, error) {
	cp := *g
	switch {
	case cp.Github != nil:
		p := *cp.Github
		p.API, cp.Github = c.s.URL, &p
	case cp.Gitlab != nil:
		p := *cp.Gitlab
		p.API, cp.Gitlab = c.s.URL, &p
	case cp.Gitea != nil:
		p := *cp.Gitea
		p.API, cp.Gitea = c.s.URL, &p
	}
	return c.clients().Repositories(ctx, &cp)
}

// corpusStandIn serves what Argo CD's pullRequest and scmProvider examples
// ask for: myorg/myrepo with a pull request labelled preview, argoproj's
// example-apps, and test-argocd-proton's test-app in a subgroup.
func corpusStandIn(t *testing.T) standInSCM {
	t.Helper()
	s := scmtest.New("")
	t.Cleanup(s.Close)
	s.AddRepo(scmtest.Repo{Owner: "myorg", Name: "myrepo", DefaultBranch: "main", Branches: map[string]string{"main": shaA, "preview-1": shaB}})
	s.AddPull("myorg/myrepo", scmtest.Pull{Number: 1, Title: "Preview", Branch: "preview-1", Target: "main", SHA: shaB, Author: "ann", Labels: []string{"preview"}})
	s.AddPull("myorg/myrepo", scmtest.Pull{Number: 2, Title: "No label", Branch: "other", Target: "main", SHA: shaA, Author: "bob"})
	s.AddRepo(scmtest.Repo{Owner: "argoproj", Name: "example-apps", DefaultBranch: "master", Branches: map[string]string{"master": shaA}})
	s.AddRepo(scmtest.Repo{Owner: "argoproj", Name: "argo-cd", DefaultBranch: "master", Branches: map[string]string{"master": shaB}})
	s.AddRepo(scmtest.Repo{Owner: "test-argocd-proton/sub", Name: "test-app", DefaultBranch: "main", Branches: map[string]string{"main": shaA}})
	return standInSCM{s}
}
