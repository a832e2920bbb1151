package webhook

// gitlabPush is the part of GitLab's Push Hook and Tag Push Hook that Ferry
// reads.
type gitlabPush struct {
	Ref               string        `json:"ref"`
	Before            string        `json:"before"`
	After             string        `json:"after"`
	Commits           []commitFiles `json:"commits"`
	TotalCommitsCount int           `json:"total_commits_count"`
	Project           struct {
		WebURL        string `json:"web_url"`
		GitHTTPURL    string `json:"git_http_url"`
		GitSSHURL     string `json:"git_ssh_url"`
		DefaultBranch string `json:"default_branch"`
	} `json:"project"`
	Repository struct {
		Homepage   string `json:"homepage"`
		GitHTTPURL string `json:"git_http_url"`
		GitSSHURL  string `json:"git_ssh_url"`
	} `json:"repository"`
}

func parseGitLab(payload []byte) ([]Push, error) {
	var e gitlabPush
	if err := decode(payload, &e); err != nil {
		return nil, err
	}
	p, r := e.Project, e.Repository
	urls := nonEmpty(p.GitHTTPURL, p.GitSSHURL, p.WebURL, r.GitHTTPURL, r.GitSSHURL, r.Homepage)
	if err := checkPush(e.Ref, urls); err != nil {
		return nil, err
	}
	// GitLab lists at most 20 commits and says how many there were.
	complete := e.TotalCommitsCount == len(e.Commits)
	return []Push{{
		Provider: GitLab, RepoURLs: urls, Ref: e.Ref,
		Before: noSHA(e.Before), After: noSHA(e.After),
		DefaultBranch: isBranch(e.Ref, p.DefaultBranch),
		Paths:         changedPaths(e.Commits, complete),
	}}, nil
}
