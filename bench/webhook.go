package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// githubPush is the part of GitHub's push event payload that a receiver
// reads: the ref, the SHAs, the repository's URLs and the changed files.
type githubPush struct {
	Ref        string         `json:"ref"`
	Before     string         `json:"before"`
	After      string         `json:"after"`
	Created    bool           `json:"created"`
	Deleted    bool           `json:"deleted"`
	Forced     bool           `json:"forced"`
	Repository githubRepo     `json:"repository"`
	Commits    []githubCommit `json:"commits"`
	HeadCommit *githubCommit  `json:"head_commit"`
}

type githubRepo struct {
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	HTMLURL       string `json:"html_url"`
	CloneURL      string `json:"clone_url"`
	GitURL        string `json:"git_url"`
	DefaultBranch string `json:"default_branch"`
	MasterBranch  string `json:"master_branch"`
}

type githubCommit struct {
	ID       string   `json:"id"`
	Message  string   `json:"message"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Modified []string `json:"modified"`
}

// deliverGitHub posts a signed GitHub push delivery for c to the worker's
// webhook, as GitHub would after the push.
func deliverGitHub(ctx context.Context, addr string, repo *gitRepo, c commit) error {
	head := githubCommit{ID: c.SHA, Message: "bench push", Added: []string{}, Removed: []string{}, Modified: c.Paths}
	body, err := json.Marshal(githubPush{
		Ref: "refs/heads/main", Before: c.Parent, After: c.SHA,
		Repository: githubRepo{
			Name: repo.Name, FullName: "bench/" + repo.Name,
			HTMLURL: strings.TrimSuffix(repo.URL, ".git"), CloneURL: repo.URL, GitURL: repo.URL,
			DefaultBranch: "main", MasterBranch: "main",
		},
		Commits: []githubCommit{head}, HeadCommit: &head,
	})
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write(body)
	id := make([]byte, 16)
	_, _ = rand.Read(id)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/ferry-bench")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", hex.EncodeToString(id))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("deliver a GitHub push to the webhook: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 { // Ferry's answers 202, Argo CD's 200
		return fmt.Errorf("deliver a GitHub push to the webhook: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
