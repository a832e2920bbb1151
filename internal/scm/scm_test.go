package scm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/scm"
	"github.com/ferry-gitops/ferry/internal/scm/scmtest"
)

const token = "t0k3n-never-shown"

const (
	sha1 = "0123456789abcdef0123456789abcdef01234567"
	sha2 = "89abcdef0123456789abcdef0123456789abcdef"
)

// standIn has org acme with two repositories, and three pull requests on
// acme/shop (one closed), pages of one item.
func standIn(t *testing.T) *scmtest.Server {
	t.Helper()
	s := scmtest.New(token)
	t.Cleanup(s.Close)
	s.AddRepo(scmtest.Repo{ID: 11, Owner: "acme", Name: "shop", DefaultBranch: "main", Topics: []string{"team-a"},
		Branches: map[string]string{"main": sha1, "feat/x": sha2}, Paths: []string{"deploy/app.yaml", "README.md"}})
	s.AddRepo(scmtest.Repo{ID: 12, Owner: "acme", Name: "old", DefaultBranch: "master", Archived: true,
		Branches: map[string]string{"master": sha2}})
	s.AddPull("acme/shop", scmtest.Pull{Number: 7, Title: "Add cart", Branch: "feat/x", Target: "main", SHA: sha2, Author: "ann", Labels: []string{"preview"}})
	s.AddPull("acme/shop", scmtest.Pull{Number: 8, Title: "Fix typo", Branch: "typo", Target: "main", SHA: sha1, Author: "bob"})
	s.AddPull("acme/shop", scmtest.Pull{Number: 9, Title: "Old", Branch: "old", Target: "main", SHA: sha1, Author: "cy", Closed: true})
	s.PageSize(1)
	return s
}

func TestPullRequestsOfEachProvider(t *testing.T) {
	ctx := context.Background()
	want := []scm.PullRequest{
		{Number: 7, Title: "Add cart", Branch: "feat/x", TargetBranch: "main", HeadSHA: sha2, Labels: []string{"preview"}, Author: "ann"},
		{Number: 8, Title: "Fix typo", Branch: "typo", TargetBranch: "main", HeadSHA: sha1, Author: "bob"},
	}
	for _, tc := range []struct {
		name     string
		open     func(cfg scm.Config) (scm.PullRequests, error)
		path     string
		authSent func(r scmtest.Request) string
	}{
		{"github", func(cfg scm.Config) (scm.PullRequests, error) {
			g, err := scm.NewGitHub(cfg)
			if g != nil {
				g.Owner, g.Repo = "acme", "shop"
			}
			return g, err
		}, "/api/v3/repos/acme/shop/pulls", func(r scmtest.Request) string { return r.Authorization }},
		{"gitlab", func(cfg scm.Config) (scm.PullRequests, error) {
			g, err := scm.NewGitLab(cfg)
			if g != nil {
				g.Project, g.State = "acme/shop", "opened"
			}
			return g, err
		}, "/api/v4/projects/acme%2Fshop/merge_requests", func(r scmtest.Request) string { return r.PrivateToken }},
		{"gitea", func(cfg scm.Config) (scm.PullRequests, error) {
			g, err := scm.NewGitea(cfg)
			if g != nil {
				g.Owner, g.Repo = "acme", "shop"
			}
			return g, err
		}, "/api/v1/repos/acme/shop/pulls", func(r scmtest.Request) string { return r.Authorization }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := standIn(t)
			c, err := tc.open(scm.Config{API: s.URL, Token: token})
			require.NoError(t, err)
			got, err := c.PullRequests(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			reqs := s.Requests()
			require.Len(t, reqs, 2, "one page per open pull request (pages of one)")
			for _, r := range reqs {
				assert.Equal(t, tc.path, r.Path)
				assert.Equal(t, map[string]string{"github": "Bearer " + token, "gitlab": token, "gitea": "token " + token}[tc.name], tc.authSent(r))
			}
			assert.Contains(t, reqs[1].RawQuery, "page=2", "the second page followed")
		})
	}
}

func TestGitHubLabelsAndGitLabStates(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	gh, err := scm.NewGitHub(scm.Config{API: s.URL, Token: token})
	require.NoError(t, err)
	gh.Owner, gh.Repo, gh.Labels = "acme", "shop", []string{"preview"}
	prs, err := gh.PullRequests(ctx)
	require.NoError(t, err)
	require.Len(t, prs, 1)
	assert.EqualValues(t, 7, prs[0].Number)

	gl, err := scm.NewGitLab(scm.Config{API: s.URL + "/api/v4", Token: token})
	require.NoError(t, err)
	gl.Project = "acme/shop" // no state: every merge request, as GitLab (and Argo CD) answers
	prs, err = gl.PullRequests(ctx)
	require.NoError(t, err)
	assert.Len(t, prs, 3)
	gl.Labels = []string{"preview"}
	prs, err = gl.PullRequests(ctx)
	require.NoError(t, err)
	require.Len(t, prs, 1)
	assert.Contains(t, s.Requests()[len(s.Requests())-1].RawQuery, "labels=preview")
}

func TestRepositoriesOfEachProvider(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		open   func(cfg scm.Config, all bool) (scm.Repositories, error)
		ssh    string
		org    string
		labels []string
	}{
		{"github", func(cfg scm.Config, all bool) (scm.Repositories, error) {
			g, err := scm.NewGitHub(cfg)
			if g != nil {
				g.Organization, g.AllBranches, g.ExcludeArchived = "acme", all, true
			}
			return g, err
		}, "git@github.com:acme/shop.git", "acme", []string{"team-a"}},
		{"gitlab", func(cfg scm.Config, all bool) (scm.Repositories, error) {
			g, err := scm.NewGitLab(cfg)
			if g != nil {
				g.Group, g.AllBranches = "acme", all
			}
			return g, err
		}, "git@gitlab.com:acme/shop.git", "acme", []string{"team-a"}},
		{"gitea", func(cfg scm.Config, all bool) (scm.Repositories, error) {
			g, err := scm.NewGitea(cfg)
			if g != nil {
				g.Owner, g.AllBranches, g.ExcludeArchived = "acme", all, true
			}
			return g, err
		}, "git@gitea.example.com:acme/shop.git", "acme", []string{"team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := standIn(t)
			c, err := tc.open(scm.Config{API: s.URL, Token: token}, false)
			require.NoError(t, err)
			repos, err := c.Repos(ctx, "")
			require.NoError(t, err)
			require.Len(t, repos, 1, "the archived repository left out: %v", repos)
			r := repos[0]
			assert.Equal(t, scm.Repository{Organization: tc.org, Repository: "shop", URL: tc.ssh, Branch: "main", Labels: tc.labels, ID: 11}, r)
			https, err := c.Repos(ctx, "https")
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(https[0].URL, "https://"), https[0].URL)
			_, err = c.Repos(ctx, "git")
			assert.ErrorContains(t, err, `cloneProtocol "git": use ssh or https`)

			branches, err := c.Branches(ctx, r)
			require.NoError(t, err)
			assert.Equal(t, []scm.Repository{withBranch(r, "main", sha1)}, branches)
			all, err := tc.open(scm.Config{API: s.URL, Token: token}, true)
			require.NoError(t, err)
			branches, err = all.Branches(ctx, r)
			require.NoError(t, err)
			assert.Equal(t, []scm.Repository{withBranch(r, "feat/x", sha2), withBranch(r, "main", sha1)}, branches)

			for p, want := range map[string]bool{"deploy": true, "deploy/app.yaml": true, "README.md": true, "charts/": false, "nope.txt": false} {
				ok, err := c.HasPath(ctx, withBranch(r, "main", sha1), p)
				require.NoError(t, err, p)
				assert.Equal(t, want, ok, p)
			}
			for _, req := range s.Requests() {
				assert.NotEmpty(t, req.Authorization+req.PrivateToken, "token sent on %s", req.Path)
			}
		})
	}
}

func withBranch(r scm.Repository, b, sha string) scm.Repository {
	r.Branch, r.SHA = b, sha
	return r
}

// TestFailuresNameTheRequestNotTheToken: a 500, a body that is not JSON
// and a wrong token each fail with the request and the status, never the
// token.
func TestFailuresNameTheRequestNotTheToken(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	gh, err := scm.NewGitHub(scm.Config{API: s.URL, Token: token})
	require.NoError(t, err)
	gh.Owner, gh.Repo = "acme", "shop"

	s.Fail(http.StatusInternalServerError)
	_, err = gh.PullRequests(ctx)
	require.ErrorContains(t, err, "list the pull requests of GitHub repository acme/shop: GET "+s.URL+"/api/v3/repos/acme/shop/pulls: 500 Internal Server Error")
	assert.NotContains(t, err.Error(), token)
	s.Fail(0)

	s.Garbage(true)
	_, err = gh.PullRequests(ctx)
	require.ErrorContains(t, err, "the answer is not the JSON the API documents")
	s.Garbage(false)

	bad, err := scm.NewGitHub(scm.Config{API: s.URL, Token: "wrong"})
	require.NoError(t, err)
	bad.Owner, bad.Repo = "acme", "shop"
	_, err = bad.PullRequests(ctx)
	require.ErrorContains(t, err, "401 Unauthorized: Bad credentials")

	gh.Repo = "gone"
	_, err = gh.PullRequests(ctx)
	assert.True(t, scm.IsNotFound(err), "%v", err)
}

// TestHostPolicy: the API URL goes through the worker's host policy; a
// metadata address is refused before any request.
func TestHostPolicy(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	none, err := netpolicy.ParseHosts(nil, "--render-allow-hosts")
	require.NoError(t, err)
	_, err = scm.NewGitHub(scm.Config{API: "http://169.254.169.254/", Hosts: none})
	require.ErrorContains(t, err, "the cloud metadata address")
	_, err = scm.NewGitea(scm.Config{API: s.URL, Hosts: none})
	require.ErrorContains(t, err, "a loopback address, which the worker's host policy refuses: an operator who trusts it lists it in --render-allow-hosts")
	listed, err := netpolicy.ParseHosts([]string{strings.TrimPrefix(s.URL, "http://")}, "--render-allow-hosts")
	require.NoError(t, err)
	g, err := scm.NewGitea(scm.Config{API: s.URL, Hosts: listed, HTTP: scm.HTTPClient(listed, false), Token: token})
	require.NoError(t, err)
	g.Owner, g.Repo = "acme", "shop"
	_, err = g.PullRequests(ctx)
	require.NoError(t, err)
}

// TestEnterpriseAndSelfManagedURLs: the API paths are added as GitHub's
// and GitLab's own clients add them.
func TestEnterpriseAndSelfManagedURLs(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	for _, api := range []string{s.URL, s.URL + "/", s.URL + "/api/v3", s.URL + "/api/v3/"} {
		gh, err := scm.NewGitHub(scm.Config{API: api, Token: token})
		require.NoError(t, err)
		gh.Owner, gh.Repo = "acme", "shop"
		_, err = gh.PullRequests(ctx)
		require.NoError(t, err, api)
	}
	_, err := scm.NewGitea(scm.Config{})
	require.ErrorContains(t, err, "api: required for Gitea")
	_, err = scm.NewGitLab(scm.Config{API: "ftp://x"})
	require.ErrorContains(t, err, "is not an http(s) URL")
}
