package appset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/scm/scmtest"
)

// prStandIn has acme/shop with two open pull requests and a closed one.
func prStandIn(t *testing.T) standInSCM {
	t.Helper()
	s := scmtest.New(testToken)
	t.Cleanup(s.Close)
	s.AddRepo(scmtest.Repo{Owner: "acme", Name: "shop", DefaultBranch: "main", Branches: map[string]string{"main": shaA}})
	s.AddPull("acme/shop", scmtest.Pull{Number: 7, Title: "Add cart", Branch: "Feature/Add_Cart", Target: "main", SHA: shaB, Author: "ann", Labels: []string{"preview", "team-a"}})
	s.AddPull("acme/shop", scmtest.Pull{Number: 8, Title: "WIP: typo", Branch: "typo", Target: "release/1.x", SHA: shaA, Author: "bob"})
	s.AddPull("acme/shop", scmtest.Pull{Number: 9, Title: "Old", Branch: "old", Target: "main", SHA: shaA, Author: "cy", Closed: true})
	s.PageSize(1)
	return standInSCM{s}
}

func pullRequestParams(t *testing.T, sc standInSCM, goTemplate bool, pr *PullRequestGenerator) ([]Params, error) {
	t.Helper()
	set := &ApplicationSet{Spec: Spec{GoTemplate: goTemplate}}
	g := &generation{set: set, r: set.renderer(), opts: Options{SCM: sc}}
	return g.pullRequest(context.Background(), pr, "spec.generators[0]")
}

// TestPullRequestParams: each provider's open pull requests give Argo CD's
// parameters; labels for goTemplate only, as Argo CD gives them.
func TestPullRequestParams(t *testing.T) {
	ref := &SecretRef{SecretName: "scm-token", Key: "token"}
	providers := map[string]*PullRequestGenerator{
		"github": {Github: &PullRequestGitHub{Owner: "acme", Repo: "shop", TokenRef: ref}},
		"gitlab": {GitLab: &PullRequestGitLab{Project: "acme/shop", TokenRef: ref, PullRequestState: "opened"}},
		"gitea":  {Gitea: &PullRequestGitea{Owner: "acme", Repo: "shop", TokenRef: ref}},
	}
	for name, pr := range providers {
		for _, goTemplate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s goTemplate=%v", name, goTemplate), func(t *testing.T) {
				got, err := pullRequestParams(t, prStandIn(t), goTemplate, pr)
				require.NoError(t, err)
				first := Params{
					"number": "7", "title": "Add cart", "branch": "Feature/Add_Cart", "branch_slug": "feature-add-cart",
					"target_branch": "main", "target_branch_slug": "main", "head_sha": shaB, "head_short_sha": shaB[:8],
					"head_short_sha_7": shaB[:7], "author": "ann",
				}
				second := Params{
					"number": "8", "title": "WIP: typo", "branch": "typo", "branch_slug": "typo",
					"target_branch": "release/1.x", "target_branch_slug": "release-1-x", "head_sha": shaA, "head_short_sha": shaA[:8],
					"head_short_sha_7": shaA[:7], "author": "bob",
				}
				if goTemplate {
					first["labels"] = []string{"preview", "team-a"}
					second["labels"] = []string(nil)
				}
				assert.Equal(t, []Params{first, second}, got)
			})
		}
	}
}

// TestPullRequestFiltersAndValues: a pull request is kept when any filter
// matches all of its expressions; values are rendered with its parameters.
func TestPullRequestFiltersAndValues(t *testing.T) {
	str := func(s string) *string { return &s }
	pr := &PullRequestGenerator{Github: &PullRequestGitHub{Owner: "acme", Repo: "shop", TokenRef: &SecretRef{SecretName: "scm-token", Key: "token"}},
		Filters: []PullRequestFilter{
			{BranchMatch: str("^Feature/"), TitleMatch: str("^WIP")}, // neither: both must match
			{TargetBranchMatch: str(`^release/`)},
		},
		Values: map[string]string{"env": "pr-{{number}}"}}
	got, err := pullRequestParams(t, prStandIn(t), false, pr)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "8", got[0]["number"])
	assert.Equal(t, "pr-8", got[0]["values.env"])

	pr.Github.Labels = []string{"team-a"}
	pr.Filters = nil
	pr.Values = map[string]string{"env": "pr-{{ .number }}-{{ index .labels 0 }}"}
	got, err = pullRequestParams(t, prStandIn(t), true, pr)
	require.NoError(t, err)
	require.Len(t, got, 1, "only the pull request labelled team-a")
	assert.Equal(t, map[string]any{"env": "pr-7-preview"}, got[0]["values"])
}

// TestPullRequestFailures: a provider's 500 or garbage is an SCMError
// naming the request and never the token; a missing repository with
// continueOnRepoNotFoundError generates nothing.
func TestPullRequestFailures(t *testing.T) {
	sc := prStandIn(t)
	pr := &PullRequestGenerator{Github: &PullRequestGitHub{Owner: "acme", Repo: "shop", TokenRef: &SecretRef{SecretName: "scm-token", Key: "token"}}}
	sc.s.Fail(500)
	_, err := pullRequestParams(t, sc, false, pr)
	require.ErrorContains(t, err, "spec.generators[0].pullRequest: list the pull requests of GitHub repository acme/shop: GET "+sc.s.URL+"/api/v3/repos/acme/shop/pulls: 500 Internal Server Error")
	assert.True(t, IsSCMError(err))
	assert.NotContains(t, err.Error(), testToken)
	sc.s.Fail(0)
	sc.s.Garbage(true)
	_, err = pullRequestParams(t, sc, false, pr)
	require.ErrorContains(t, err, "is not the JSON the API documents")
	assert.True(t, IsSCMError(err))
	sc.s.Garbage(false)

	pr.Github.Repo = "gone"
	_, err = pullRequestParams(t, sc, false, pr)
	require.ErrorContains(t, err, "404 Not Found")
	pr.ContinueOnRepoNotFoundError = true
	got, err := pullRequestParams(t, sc, false, pr)
	require.NoError(t, err)
	assert.Empty(t, got)

	pr.Github.TokenRef.SecretName = "missing"
	_, err = pullRequestParams(t, sc, false, pr)
	require.ErrorContains(t, err, `spec.generators[0].pullRequest: github.tokenRef: Secret "missing" not found`)
	assert.False(t, IsSCMError(err), "a missing Secret is the set's to fix, not the provider's failure")

	_, err = (&generation{set: &ApplicationSet{}, opts: Options{}}).pullRequest(context.Background(), pr, "spec.generators[0]")
	require.ErrorContains(t, err, "the SCM providers are read by the control worker")
}

func TestBranchSlug(t *testing.T) {
	for in, want := range map[string]string{
		"feature/add_cart":                     "feature-add-cart",
		"Fix: the thing!":                      "fix-the-thing",
		"ünïcode-brånch":                       "unicode-branch",
		"a--b__c":                              "a-b-c",
		"x" + strings.Repeat("-abcdefghij", 6): "x-abcdefghij-abcdefghij-abcdefghij-abcdefghij",
		strings.Repeat("a", 60):                strings.Repeat("a", 50),
	} {
		assert.Equal(t, want, branchSlug(in), in)
	}
}
