package appset

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// unsupportedSCM are the providers and fields of Argo CD's pullRequest and
// scmProvider generators that Ferry does not run, by their path below
// spec.generators, with what to do instead.
var unsupportedSCM = map[string]string{
	"pullRequest.bitbucket":            "Bitbucket Cloud is not supported by the pull request generator of Ferry: use github, gitlab or gitea, or list the preview branches in a list generator",
	"pullRequest.bitbucketServer":      "Bitbucket Server is not supported by the pull request generator of Ferry: use github, gitlab or gitea, or list the preview branches in a list generator",
	"pullRequest.azuredevops":          "Azure DevOps is not supported by the pull request generator of Ferry: use github, gitlab or gitea, or list the preview branches in a list generator",
	"pullRequest.github.appSecretName": "GitHub App credentials are not supported by Ferry yet: give a token in tokenRef instead (a Secret of the control namespace labelled argocd.argoproj.io/secret-type: scm-creds)",
	"pullRequest.gitlab.caRef":         "a CA from a ConfigMap is not supported by Ferry yet: remove it and add the CA to the control worker's trusted certificates (SSL_CERT_FILE or SSL_CERT_DIR)",
	"scmProvider.bitbucket":            "Bitbucket Cloud is not supported by the SCM provider generator of Ferry: use github, gitlab or gitea, or list the repositories in a list generator",
	"scmProvider.bitbucketServer":      "Bitbucket Server is not supported by the SCM provider generator of Ferry: use github, gitlab or gitea, or list the repositories in a list generator",
	"scmProvider.azureDevOps":          "Azure DevOps is not supported by the SCM provider generator of Ferry: use github, gitlab or gitea, or list the repositories in a list generator",
	"scmProvider.awsCodeCommit":        "AWS CodeCommit is not supported by the SCM provider generator of Ferry: use github, gitlab or gitea, or list the repositories in a list generator",
	"scmProvider.github.appSecretName": "GitHub App credentials are not supported by Ferry yet: give a token in tokenRef instead (a Secret of the control namespace labelled argocd.argoproj.io/secret-type: scm-creds)",
	"scmProvider.gitlab.caRef":         "a CA from a ConfigMap is not supported by Ferry yet: remove it and add the CA to the control worker's trusted certificates (SSL_CERT_FILE or SSL_CERT_DIR)",
}

var gitLabStates = []string{"opened", "closed", "merged", "locked", "all"}

// validatePullRequest checks a pullRequest generator at path (its entry).
func validatePullRequest(pr *PullRequestGenerator, path string) []app.FieldError {
	v := &fieldErrors{path: path + ".pullRequest"}
	var providers []string
	if p := pr.Github; p != nil {
		providers = append(providers, "github")
		v.required(".github.owner", p.Owner, "the user or organization that owns the repository")
		v.required(".github.repo", p.Repo, "the repository whose pull requests generate the apps")
		v.apiURL(".github.api", p.API, false)
		v.tokenRef(".github.tokenRef", p.TokenRef)
	}
	if p := pr.GitLab; p != nil {
		providers = append(providers, "gitlab")
		v.required(".gitlab.project", p.Project, "the project's ID or path, such as group/project")
		v.apiURL(".gitlab.api", p.API, false)
		v.tokenRef(".gitlab.tokenRef", p.TokenRef)
		if s := p.PullRequestState; s != "" && !contains(gitLabStates, s) {
			v.add(".gitlab.pullRequestState", "%q is not a merge request state of GitLab: use one of %s, or leave it out for all", s, strings.Join(gitLabStates, ", "))
		}
	}
	if p := pr.Gitea; p != nil {
		providers = append(providers, "gitea")
		v.required(".gitea.owner", p.Owner, "the user or organization that owns the repository")
		v.required(".gitea.repo", p.Repo, "the repository whose pull requests generate the apps")
		v.apiURL(".gitea.api", p.API, true)
		v.tokenRef(".gitea.tokenRef", p.TokenRef)
	}
	v.oneProvider(providers, "pullRequest")
	_, errs := compilePRFilters(pr.Filters, v.path)
	v.regexps(errs)
	v.requeue(pr.RequeueAfterSeconds)
	return v.errs
}

// validateSCMProvider checks an scmProvider generator at path (its entry).
func validateSCMProvider(sp *SCMProviderGenerator, path string) []app.FieldError {
	v := &fieldErrors{path: path + ".scmProvider"}
	var providers []string
	if p := sp.Github; p != nil {
		providers = append(providers, "github")
		v.required(".github.organization", p.Organization, "the organization whose repositories generate the apps")
		v.apiURL(".github.api", p.API, false)
		v.tokenRef(".github.tokenRef", p.TokenRef)
	}
	if p := sp.Gitlab; p != nil {
		providers = append(providers, "gitlab")
		v.required(".gitlab.group", p.Group, "the group's ID or path whose projects generate the apps")
		v.apiURL(".gitlab.api", p.API, false)
		v.tokenRef(".gitlab.tokenRef", p.TokenRef)
	}
	if p := sp.Gitea; p != nil {
		providers = append(providers, "gitea")
		v.required(".gitea.owner", p.Owner, "the organization whose repositories generate the apps")
		v.apiURL(".gitea.api", p.API, true)
		v.tokenRef(".gitea.tokenRef", p.TokenRef)
	}
	v.oneProvider(providers, "scmProvider")
	switch sp.CloneProtocol {
	case "", "ssh", "https":
	default:
		v.add(".cloneProtocol", "%q is not a clone protocol: use ssh (the default) or https", sp.CloneProtocol)
	}
	_, errs := compileSCMFilters(sp.Filters, v.path)
	v.regexps(errs)
	v.requeue(sp.RequeueAfterSeconds)
	return v.errs
}

// fieldErrors gathers the problems of one generator, below path.
type fieldErrors struct {
	path string
	errs []app.FieldError
}

func (v *fieldErrors) add(field, format string, args ...any) {
	v.errs = append(v.errs, app.FieldError{Field: v.path + field, Message: fmt.Sprintf(format, args...)})
}

func (v *fieldErrors) required(field, value, what string) {
	if strings.TrimSpace(value) == "" {
		v.add(field, "required: %s", what)
	}
}

func (v *fieldErrors) apiURL(field, api string, required bool) {
	if api == "" {
		if required {
			v.add(field, "required: the server's URL, such as https://gitea.example.com")
		}
		return
	}
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(field, "%q is not an http(s) URL: write the provider's API URL, such as https://git.example.com", api)
		return
	}
	if u.User != nil {
		v.add(field, "holds credentials: remove them, and give the token in tokenRef")
	}
}

func (v *fieldErrors) tokenRef(field string, ref *SecretRef) {
	if ref == nil {
		return
	}
	v.required(field+".secretName", ref.SecretName, "the Secret of the control namespace that holds the token")
	v.required(field+".key", ref.Key, "the Secret's key that holds the token, such as token")
}

func (v *fieldErrors) oneProvider(providers []string, generator string) {
	switch len(providers) {
	case 0:
		v.add("", "give one provider: github, gitlab or gitea")
	case 1:
	default:
		v.add("", "one provider per generator, found %s: write a %s generator for each", strings.Join(providers, " and "), generator)
	}
}

func (v *fieldErrors) regexps(errs []error) {
	for _, err := range errs {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		v.errs = append(v.errs, app.FieldError{Field: field, Message: msg + ": fix the expression"})
	}
}

func (v *fieldErrors) requeue(secs *int64) {
	if secs != nil && *secs < 0 {
		v.add(".requeueAfterSeconds", "must not be negative: give the seconds between two listings, or leave it out for 30 minutes")
	}
}
