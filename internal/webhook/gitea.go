package webhook

// giteaPush is the part of Gitea's (and Forgejo's) push event that Ferry
// reads.
type giteaPush struct {
	Ref          string        `json:"ref"`
	Before       string        `json:"before"`
	After        string        `json:"after"`
	Commits      []commitFiles `json:"commits"`
	TotalCommits int           `json:"total_commits"`
	Repository   struct {
		HTMLURL       string `json:"html_url"`
		CloneURL      string `json:"clone_url"`
		SSHURL        string `json:"ssh_url"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
}

func parseGitea(payload []byte) ([]Push, error) {
	var e giteaPush
	if err := decode(payload, &e); err != nil {
		return nil, err
	}
	repo := e.Repository
	urls := nonEmpty(repo.CloneURL, repo.SSHURL, repo.HTMLURL)
	if err := checkPush(e.Ref, urls); err != nil {
		return nil, err
	}
	// Gitea caps the commits it lists and says how many there were.
	complete := e.TotalCommits == len(e.Commits)
	return []Push{{
		Provider: Gitea, RepoURLs: urls, Ref: e.Ref,
		Before: noSHA(e.Before), After: noSHA(e.After),
		DefaultBranch: isBranch(e.Ref, repo.DefaultBranch),
		Paths:         changedPaths(e.Commits, complete),
	}}, nil
}
