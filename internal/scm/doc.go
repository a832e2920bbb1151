// Package scm reads what the pullRequest and scmProvider generators of an
// ApplicationSet need from an SCM provider's REST API: the open pull
// requests of a repository, and the repositories of an organization (or
// group) with their branches and whether a path exists in them. GitHub
// (and GitHub Enterprise), GitLab and Gitea are spoken, each through the
// few documented endpoints the generators use, with a small typed client
// over net/http instead of each provider's SDK: the SDKs add some 150,000
// lines to a cold build for a dozen GET requests.
//
// A token is sent as each provider expects (GitHub: Authorization Bearer,
// GitLab: PRIVATE-TOKEN, Gitea: Authorization token), never to another
// host than the API's (a pagination link elsewhere is refused), and never
// appears in an error.
//
//	c, err := scm.NewGitHub(scm.Config{API: "", Token: tok, HTTP: scm.HTTPClient(hosts, false)})
//	prs, err := c.PullRequests(ctx, "argoproj", "argo-cd", nil)
package scm
