package webhook

// bitbucketPush is the part of Bitbucket Cloud's repo:push event that Ferry
// reads. One delivery may carry several ref changes.
type bitbucketPush struct {
	Repository struct {
		FullName string `json:"full_name"`
		Links    struct {
			HTML struct {
				Href string `json:"href"`
			} `json:"html"`
		} `json:"links"`
		MainBranch *struct {
			Name string `json:"name"`
		} `json:"mainbranch"`
	} `json:"repository"`
	Push struct {
		Changes []struct {
			Old *bitbucketRef `json:"old"`
			New *bitbucketRef `json:"new"`
		} `json:"changes"`
	} `json:"push"`
}

type bitbucketRef struct {
	Type   string `json:"type"` // branch or tag
	Name   string `json:"name"`
	Target struct {
		Hash string `json:"hash"`
	} `json:"target"`
}

func (r *bitbucketRef) ref() string {
	if r == nil || r.Name == "" {
		return ""
	}
	switch r.Type {
	case "branch":
		return "refs/heads/" + r.Name
	case "tag", "annotated_tag":
		return "refs/tags/" + r.Name
	}
	return ""
}

func (r *bitbucketRef) hash() string {
	if r == nil {
		return ""
	}
	return noSHA(r.Target.Hash)
}

// parseBitbucket reads a repo:push. Bitbucket lists no changed files, so
// Paths stay unknown; when the payload does not name the main branch, every
// branch push may have moved HEAD.
func parseBitbucket(payload []byte) ([]Push, error) {
	var e bitbucketPush
	if err := decode(payload, &e); err != nil {
		return nil, err
	}
	repo := e.Repository
	urls := nonEmpty(repo.Links.HTML.Href)
	if len(urls) == 0 && repo.FullName != "" {
		urls = []string{"https://bitbucket.org/" + repo.FullName}
	}
	if len(e.Push.Changes) == 0 {
		return nil, malformed("push.changes is empty")
	}
	var pushes []Push
	for i, c := range e.Push.Changes {
		side := c.New
		if side == nil {
			side = c.Old
		}
		ref := side.ref()
		if ref == "" {
			return nil, malformed("push.changes[%d] names no branch or tag", i)
		}
		if err := checkPush(ref, urls); err != nil {
			return nil, err
		}
		defaultBranch := side.Type == "branch"
		if mb := repo.MainBranch; mb != nil && mb.Name != "" {
			defaultBranch = isBranch(ref, mb.Name)
		}
		pushes = append(pushes, Push{
			Provider: Bitbucket, RepoURLs: urls, Ref: ref,
			Before: c.Old.hash(), After: c.New.hash(), DefaultBranch: defaultBranch,
		})
	}
	return pushes, nil
}
