package appset

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/scm/scmtest"
)

// orgStandIn has org acme: shop (topics team-a, deploy/ on its branches,
// two branches), tools (topic team-b, no deploy/), one page per item.
func orgStandIn(t *testing.T) standInSCM {
	t.Helper()
	s := scmtest.New(testToken)
	t.Cleanup(s.Close)
	s.AddRepo(scmtest.Repo{ID: 11, Owner: "acme", Name: "shop", DefaultBranch: "main", Topics: []string{"team-a", "web"},
		Branches: map[string]string{"main": shaA, "Feature_X": shaB}, Paths: []string{"deploy/kustomization.yaml"}})
	s.AddRepo(scmtest.Repo{ID: 12, Owner: "acme", Name: "tools", DefaultBranch: "trunk", Topics: []string{"team-b"},
		Branches: map[string]string{"trunk": shaB}, Paths: []string{"README.md"}})
	s.PageSize(1)
	return standInSCM{s}
}

func scmParams(t *testing.T, sc standInSCM, sp *SCMProviderGenerator) ([]Params, error) {
	t.Helper()
	set := &ApplicationSet{}
	g := &generation{set: set, r: set.renderer(), opts: Options{SCM: sc}}
	return g.scmProvider(context.Background(), sp, "spec.generators[0]")
}

// TestSCMProviderParams: each provider's repositories give Argo CD's
// parameters, at the default branch or at every branch.
func TestSCMProviderParams(t *testing.T) {
	ref := &SecretRef{SecretName: "scm-token", Key: "token"}
	host := map[string]string{"github": "github.com", "gitlab": "gitlab.com", "gitea": "gitea.example.com"}
	for _, name := range []string{"github", "gitlab", "gitea"} {
		gen := func(all bool) *SCMProviderGenerator {
			switch name {
			case "github":
				return &SCMProviderGenerator{Github: &SCMGitHub{Organization: "acme", TokenRef: ref, AllBranches: all}}
			case "gitlab":
				return &SCMProviderGenerator{Gitlab: &SCMGitLab{Group: "acme", TokenRef: ref, AllBranches: all}}
			}
			return &SCMProviderGenerator{Gitea: &SCMGitea{Owner: "acme", TokenRef: ref, AllBranches: all}}
		}
		t.Run(name, func(t *testing.T) {
			sc := orgStandIn(t)
			got, err := scmParams(t, sc, gen(false))
			require.NoError(t, err)
			shop := Params{"organization": "acme", "repository": "shop", "repository_id": int64(11),
				"url": fmt.Sprintf("git@%s:acme/shop.git", host[name]), "branch": "main", "branchNormalized": "main",
				"sha": shaA, "short_sha": shaA[:8], "short_sha_7": shaA[:7], "labels": "team-a,web"}
			tools := Params{"organization": "acme", "repository": "tools", "repository_id": int64(12),
				"url": fmt.Sprintf("git@%s:acme/tools.git", host[name]), "branch": "trunk", "branchNormalized": "trunk",
				"sha": shaB, "short_sha": shaB[:8], "short_sha_7": shaB[:7], "labels": "team-b"}
			assert.Equal(t, []Params{shop, tools}, got)

			all, err := scmParams(t, sc, gen(true))
			require.NoError(t, err)
			require.Len(t, all, 3)
			assert.Equal(t, "Feature_X", all[0]["branch"])
			assert.Equal(t, "feature-x", all[0]["branchNormalized"])
			for _, r := range sc.s.Requests() {
				assert.NotEmpty(t, r.Authorization+r.PrivateToken, "the token on %s", r.Path)
			}
		})
	}
}

// TestSCMProviderFilters: repositoryMatch and labelMatch pick repositories
// before their branches are listed; pathsExist, pathsDoNotExist and
// branchMatch pick branches; any filter keeps; cloneProtocol https.
func TestSCMProviderFilters(t *testing.T) {
	str := func(s string) *string { return &s }
	ref := &SecretRef{SecretName: "scm-token", Key: "token"}
	for _, tc := range []struct {
		name    string
		filters []SCMFilter
		want    []string // repository@branch
	}{
		{"repositoryMatch", []SCMFilter{{RepositoryMatch: str("^sh")}}, []string{"shop@main", "shop@Feature_X"}},
		{"labelMatch", []SCMFilter{{LabelMatch: str("^team-b$")}}, []string{"tools@trunk"}},
		{"pathsExist", []SCMFilter{{PathsExist: []string{"deploy/"}}}, []string{"shop@Feature_X", "shop@main"}},
		{"pathsDoNotExist", []SCMFilter{{PathsDoNotExist: []string{"deploy"}}}, []string{"tools@trunk"}},
		{"branchMatch", []SCMFilter{{BranchMatch: str("^Feature")}}, []string{"shop@Feature_X"}},
		{"any filter keeps", []SCMFilter{{BranchMatch: str("^trunk$")}, {BranchMatch: str("^main$"), PathsExist: []string{"deploy"}}},
			[]string{"shop@main", "tools@trunk"}},
		{"all of one filter", []SCMFilter{{RepositoryMatch: str("tools"), PathsExist: []string{"deploy"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scmParams(t, orgStandIn(t), &SCMProviderGenerator{Github: &SCMGitHub{Organization: "acme", TokenRef: ref, AllBranches: true},
				Filters: tc.filters, CloneProtocol: "https"})
			require.NoError(t, err)
			var names []string
			for _, p := range got {
				names = append(names, fmt.Sprintf("%s@%s", p["repository"], p["branch"]))
				assert.Equal(t, fmt.Sprintf("https://github.com/acme/%s.git", p["repository"]), p["url"])
			}
			assert.ElementsMatch(t, tc.want, names)
		})
	}
}

func TestSCMProviderFailure(t *testing.T) {
	sc := orgStandIn(t)
	sc.s.Fail(502)
	_, err := scmParams(t, sc, &SCMProviderGenerator{Gitlab: &SCMGitLab{Group: "acme", TokenRef: &SecretRef{SecretName: "scm-token", Key: "token"}}})
	require.ErrorContains(t, err, "spec.generators[0].scmProvider: list the projects of GitLab group acme: GET "+sc.s.URL+"/api/v4/groups/acme/projects: 502 Bad Gateway")
	assert.True(t, IsSCMError(err))
	assert.NotContains(t, err.Error(), testToken)
}

const badSCMSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews}
spec:
  generators:
  - pullRequest:
      github: {api: "ftp://x", tokenRef: {secretName: ""}}
      gitlab: {project: a/b, pullRequestState: open}
      filters: [{branchMatch: "feat/(", titleMatch: "[z-a]"}]
      requeueAfterSeconds: -5
  - pullRequest:
      gitea: {owner: acme, repo: shop}
  - scmProvider:
      github: {organization: ""}
      cloneProtocol: git
      filters: [{repositoryMatch: "(", labelMatch: ok}]
      requeueAfterSeconds: -1
  - scmProvider: {}
  - pullRequest:
      bitbucketServer: {project: p, repo: r, api: "https://bb"}
  - scmProvider:
      github: {organization: acme, appSecretName: app}
      awsCodeCommit: {}
  template:
    metadata: {name: 'pr-{{number}}'}
    spec:
      project: default
      source: {repoURL: 'https://example.com/r.git', targetRevision: '{{head_sha}}', path: app}
      destination: {name: us-east-1, namespace: 'pr-{{number}}'}
`

// TestSCMValidationNamesEveryProblem: bad input is refused with every
// problem at once, each naming its field and the fix.
func TestSCMValidationNamesEveryProblem(t *testing.T) {
	_, err := Read([]byte(badSCMSet))
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	got := map[string]string{}
	for _, fe := range ve.Errors {
		got[fe.Field] = fe.Message
	}
	want := map[string]string{
		"spec.generators[0].pullRequest":                            "one provider per generator, found github and gitlab: write a pullRequest generator for each",
		"spec.generators[0].pullRequest.github.owner":               "required: the user or organization that owns the repository",
		"spec.generators[0].pullRequest.github.repo":                "required: the repository whose pull requests generate the apps",
		"spec.generators[0].pullRequest.github.api":                 `"ftp://x" is not an http(s) URL`,
		"spec.generators[0].pullRequest.github.tokenRef.secretName": "required: the Secret of the control namespace that holds the token",
		"spec.generators[0].pullRequest.github.tokenRef.key":        "required: the Secret's key that holds the token",
		"spec.generators[0].pullRequest.gitlab.pullRequestState":    `"open" is not a merge request state of GitLab: use one of opened, closed, merged, locked, all`,
		"spec.generators[0].pullRequest.filters[0].branchMatch":     `"feat/(" is not a regular expression (Go's RE2 syntax): error parsing regexp: missing closing )`,
		"spec.generators[0].pullRequest.filters[0].titleMatch":      `"[z-a]" is not a regular expression`,
		"spec.generators[0].pullRequest.requeueAfterSeconds":        "must not be negative",
		"spec.generators[1].pullRequest.gitea.api":                  "required: the server's URL",
		"spec.generators[2].scmProvider.github.organization":        "required: the organization whose repositories generate the apps",
		"spec.generators[2].scmProvider.cloneProtocol":              `"git" is not a clone protocol: use ssh (the default) or https`,
		"spec.generators[2].scmProvider.filters[0].repositoryMatch": `"(" is not a regular expression`,
		"spec.generators[2].scmProvider.requeueAfterSeconds":        "must not be negative",
		"spec.generators[3].scmProvider":                            "give one provider: github, gitlab or gitea",
		"spec.generators[4].pullRequest.bitbucketServer":            "Bitbucket Server is not supported by the pull request generator of Ferry: use github, gitlab or gitea",
		"spec.generators[5].scmProvider.github.appSecretName":       "GitHub App credentials are not supported by Ferry yet: give a token in tokenRef instead",
		"spec.generators[5].scmProvider.awsCodeCommit":              "AWS CodeCommit is not supported by the SCM provider generator of Ferry",
	}
	for field, msg := range want {
		if assert.Contains(t, got, field, "every problem named: %v", err) {
			assert.Contains(t, got[field], msg, field)
		}
	}
	assert.Contains(t, err.Error(), `applicationset "previews"`)
}

// TestSCMRequeue: a set of pullRequest or scmProvider generators (with list
// or clusters ones) runs them every 30 minutes, or at the shortest of their
// requeueAfterSeconds, as Argo CD; a git generator beside them keeps the
// set's default, or its own requeueAfterSeconds, longer or shorter.
func TestSCMRequeue(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	pr := func(r *int64) Generator {
		return Generator{PullRequest: &PullRequestGenerator{Github: &PullRequestGitHub{Owner: "o", Repo: "r"}, RequeueAfterSeconds: r}}
	}
	scmGen := Generator{SCMProvider: &SCMProviderGenerator{Github: &SCMGitHub{Organization: "o"}}}
	list := Generator{List: &ListGenerator{Elements: []map[string]any{{"a": "b"}}}}
	git := func(r *int64) Generator {
		return Generator{Git: &GitGenerator{RepoURL: "https://x", Directories: []GitPath{{Path: "*"}}, RequeueAfterSeconds: r}}
	}
	def := 3 * time.Minute
	for _, tc := range []struct {
		name string
		gens []Generator
		want time.Duration
	}{
		{"pull request alone", []Generator{pr(nil)}, 30 * time.Minute},
		{"scm provider alone", []Generator{scmGen}, 30 * time.Minute},
		{"pull request with its own", []Generator{pr(secs(3600))}, time.Hour},
		{"the shortest", []Generator{pr(secs(600)), scmGen}, 10 * time.Minute},
		{"matrix with a list", []Generator{{Matrix: &MatrixGenerator{Generators: []Generator{pr(nil), list}}}}, 30 * time.Minute},
		{"git beside it", []Generator{pr(nil), git(nil)}, def},
		{"pull request shorter than git", []Generator{pr(secs(60)), git(nil)}, time.Minute},
		{"git's own, longer", []Generator{list, git(secs(600))}, 10 * time.Minute},
		{"list alone", []Generator{list}, def},
		{"no scm generator, git shorter", []Generator{git(secs(60))}, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &ApplicationSet{Spec: Spec{Generators: tc.gens}}
			assert.Equal(t, tc.want, s.Requeue(def))
		})
	}
}
