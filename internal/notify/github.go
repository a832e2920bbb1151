package notify

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"time"
)

const gitHubAPIURL = "https://api.github.com"

// GitHubOptions are service.github's: a GitHub App (as Argo CD) or a
// token; enterpriseBaseURL is the API's URL (GitHub Enterprise, or any
// server answering GitHub's API).
type GitHubOptions struct {
	AppID              any    `json:"appID,omitempty"`
	InstallationID     any    `json:"installationID,omitempty"`
	PrivateKey         string `json:"privateKey,omitempty"`
	Token              string `json:"token,omitempty"`
	EnterpriseBaseURL  string `json:"enterpriseBaseURL,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
}

func (g *GitHubOptions) check() error {
	app := g.AppID != nil || g.InstallationID != nil || g.PrivateKey != ""
	switch {
	case app && g.Token != "":
		return fmt.Errorf("give either appID, installationID and privateKey (a GitHub App) or token, not both")
	case app && (g.AppID == nil || g.InstallationID == nil || g.PrivateKey == ""):
		return fmt.Errorf("a GitHub App needs appID, installationID and privateKey")
	case !app && g.Token == "":
		return fmt.Errorf("give appID, installationID and privateKey (a GitHub App) or token")
	}
	return nil
}

// gitHubBase is the API's base URL: a GitHub Enterprise URL gets /api/v3,
// as Argo CD's GitHub client adds it.
func gitHubBase(o *GitHubOptions) string {
	if o.EnterpriseBaseURL == "" {
		return gitHubAPIURL
	}
	base := strings.TrimRight(o.EnterpriseBaseURL, "/")
	if !strings.HasSuffix(base, "/api/v3") {
		base += "/api/v3"
	}
	return base
}

// send sets the commit status the template describes on the app's
// revision.
func (o *GitHubOptions) send(ctx context.Context, _ string, n Notification, _ Delivery) error {
	g := n.GitHub
	if g == nil || g.Status == nil {
		return nil // the templates set nothing on GitHub
	}
	repo := fullNameByRepoURL(g.RepoURLPath)
	if strings.Count(repo, "/") != 1 {
		return permanent("repository %q is not owner/name on GitHub", g.RepoURLPath)
	}
	sha := strings.TrimSpace(g.RevisionPath)
	if sha == "" {
		return permanent("no revision to set a commit status on (github.revisionPath is empty for this app)")
	}
	client := httpClient(o.InsecureSkipVerify)
	base := gitHubBase(o)
	token, scheme := o.Token, "token"
	if token == "" {
		var err error
		if token, err = installationToken(ctx, client, base, o); err != nil {
			return err
		}
	}
	desc := truncate(n.Message, 140)
	body, _ := json.Marshal(map[string]string{"state": g.Status.State, "context": g.Status.Label,
		"target_url": g.Status.TargetURL, "description": desc})
	req, err := newRequest(http.MethodPost, fmt.Sprintf("%s/repos/%s/statuses/%s", base, repo, sha), body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", scheme+" "+token)
	_, err = do(ctx, client, req)
	return err
}

// installationToken is a GitHub App installation's access token: a JWT
// signed with the App's private key, exchanged at the API.
func installationToken(ctx context.Context, client *http.Client, base string, o *GitHubOptions) (string, error) {
	key, err := parseRSAKey(o.PrivateKey)
	if err != nil {
		return "", permanent("privateKey: %v", err)
	}
	now := time.Now()
	header := b64(`{"alg":"RS256","typ":"JWT"}`)
	claims, _ := json.Marshal(map[string]any{"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": fmt.Sprint(o.AppID)})
	signing := header + "." + b64(string(claims))
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", permanent("sign the GitHub App's token: %v", err)
	}
	jwt := signing + "." + base64.RawURLEncoding.EncodeToString(sig)
	req, err := newRequest(http.MethodPost, fmt.Sprintf("%s/app/installations/%v/access_tokens", base, o.InstallationID), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Authorization", "Bearer "+jwt)
	answer, err := do(ctx, client, req)
	if err != nil {
		return "", fmt.Errorf("GitHub App installation token: %w", err)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(answer, &out); err != nil || out.Token == "" {
		return "", fmt.Errorf("GitHub App installation token: no token in the answer")
	}
	return out.Token, nil
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func parseRSAKey(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, fmt.Errorf("not a PEM private key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not an RSA private key (PKCS#1 or PKCS#8)")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("not an RSA private key")
	}
	return rk, nil
}
