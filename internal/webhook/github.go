package webhook

import "strings"

// githubPush is the part of GitHub's push event that Ferry reads.
type githubPush struct {
	Ref        string        `json:"ref"`
	Before     string        `json:"before"`
	After      string        `json:"after"`
	Forced     bool          `json:"forced"`
	Commits    []commitFiles `json:"commits"`
	Repository struct {
		HTMLURL       string `json:"html_url"`
		URL           string `json:"url"`
		CloneURL      string `json:"clone_url"`
		SSHURL        string `json:"ssh_url"`
		GitURL        string `json:"git_url"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
}

// githubMaxCommits is the most commits older GitHub versions list in a push
// event (current ones list more); a push with that many may have more, so
// its file list counts as unknown.
const githubMaxCommits = 20

func parseGitHub(payload []byte) ([]Push, error) {
	var e githubPush
	if err := decode(payload, &e); err != nil {
		return nil, err
	}
	repo := e.Repository
	urls := nonEmpty(repo.CloneURL, repo.SSHURL, repo.HTMLURL, repo.GitURL, repo.URL)
	if err := checkPush(e.Ref, urls); err != nil {
		return nil, err
	}
	// A forced push may drop commits whose files the list then misses.
	complete := !e.Forced && len(e.Commits) < githubMaxCommits
	return []Push{{
		Provider: GitHub, RepoURLs: urls, Ref: e.Ref,
		Before: noSHA(e.Before), After: noSHA(e.After),
		DefaultBranch: isBranch(e.Ref, repo.DefaultBranch),
		Paths:         changedPaths(e.Commits, complete),
	}}, nil
}

// checkPush refuses a push payload without the fields every push has.
func checkPush(ref string, urls []string) error {
	if !strings.HasPrefix(ref, "refs/") {
		return malformed("ref %q is not a full ref (refs/heads/… or refs/tags/…)", ref)
	}
	if len(urls) == 0 {
		return malformed("the repository has no URL")
	}
	return nil
}

// isBranch reports whether ref is the branch named branch.
func isBranch(ref, branch string) bool {
	return branch != "" && ref == "refs/heads/"+branch
}
