package gitsource

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

func writeCreds(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func credSecret(name, typ string, fields map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  labels:\n    argocd.argoproj.io/secret-type: " + typ + "\nstringData:\n")
	for k, v := range fields {
		b.WriteString("  " + k + ": " + strconv.Quote(v) + "\n")
	}
	return b.String()
}

// TestRepoCredsGoOnlyToTheirURLs runs real fetches against two loopback Git
// servers with Argo CD repository Secrets: a repo-creds template for A's
// prefix, and a repository Secret for one other repo on A. B, whose URLs
// share no prefix, records no Authorization header.
func TestRepoCredsGoOnlyToTheirURLs(t *testing.T) {
	ctx := context.Background()
	a, b := newGitServer(t), newGitServer(t)
	fxA, fxB := newFixtureRepo(t, a, "private"), newFixtureRepo(t, b, "public")
	a.User, a.Pass = "robot", "hunter2-token"
	prefixA := strings.TrimSuffix(fxA.url, "/private.git")
	dir := writeCreds(t, map[string]string{
		"creds.yaml": credSecret("team", SecretTypeRepoCreds, map[string]string{"url": prefixA, "username": "robot",
			"password": "hunter2-token", "insecure": "true"}) +
			"---\n" + credSecret("other", SecretTypeRepo, map[string]string{"url": prefixA + "/other.git", "password": "wrong"}),
		"unrelated.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
	})
	creds, err := LoadRepoCreds(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	repos := newRepos(t, Options{Auth: creds})
	sha, err := repos.Resolve(ctx, fxA.url, "dev")
	if err != nil || sha != fxA.b {
		t.Fatalf("Resolve on A = %s, %v", sha, err)
	}
	if _, release, err := repos.Checkout(ctx, fxA.url, sha); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	if len(a.Authorizations()) == 0 {
		t.Fatal("A received no credential")
	}
	for _, u := range []string{fxB.url, strings.Replace(fxB.url, "127.0.0.1", "localhost", 1)} {
		if _, err := repos.Resolve(ctx, u, "main"); err != nil {
			t.Fatalf("Resolve on B (%s): %v", u, err)
		}
		if _, release, err := repos.Checkout(ctx, u, fxB.a); err != nil {
			t.Fatalf("Checkout on B (%s): %v", u, err)
		} else {
			release()
		}
	}
	if got := b.Authorizations(); len(got) != 0 {
		t.Fatalf("B received %d Authorization headers, want none", len(got))
	}

	// The repository Secret for other.git has no insecure: over plain http
	// its password is not sent, though a template covers the URL too.
	before := len(a.Authorizations())
	_, err = repos.Resolve(ctx, prefixA+"/other.git", "main")
	if !IsCredentialRefused(err) || !strings.Contains(err.Error(), `Secret "other"`) {
		t.Fatalf("Resolve of other.git over http: %v, want a refusal naming the Secret", err)
	}
	if got := a.Authorizations()[before:]; len(got) != 0 {
		t.Fatalf("A received %d Authorization headers over http without insecure", len(got))
	}
}

func TestRepoCredsMatching(t *testing.T) {
	dir := writeCreds(t, map[string]string{"c.yaml": credSecret("org", SecretTypeRepoCreds, map[string]string{"url": "https://git.example.com/org", "password": "org"}) +
		"---\n" + credSecret("team", SecretTypeRepoCreds, map[string]string{"url": "https://git.example.com/org/team", "bearerToken": "team"}) +
		"---\n" + credSecret("one", SecretTypeRepo, map[string]string{"url": "https://git.example.com/org/team/one", "password": "one"})})
	creds, err := LoadRepoCreds(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		"https://git.example.com/org/app.git":      "basic org",
		"https://git.example.com/org/team/app.git": "bearer team",
		"https://git.example.com/org/team/one.git": "basic one",
		"https://git.example.com/org-evil/app.git": "none",
		"https://git.example.com/other/app.git":    "none",
		"https://evil.example.com/org/app.git":     "none",
	} {
		got, err := creds.Auth(url)
		if err != nil {
			t.Fatal(err)
		}
		desc := "none"
		switch a := got.(type) {
		case *githttp.BasicAuth:
			desc = "basic " + a.Password
		case *githttp.TokenAuth:
			desc = "bearer " + a.Token
		}
		if desc != want {
			t.Errorf("Auth(%s) = %s, want %s", url, desc, want)
		}
	}
}

func TestRepoCredsBadSecrets(t *testing.T) {
	dir := writeCreds(t, map[string]string{"bad.yaml": credSecret("no-url", SecretTypeRepo, map[string]string{"password": "p"}) +
		"---\n" + credSecret("tls", SecretTypeRepoCreds, map[string]string{"url": "https://h", "tlsClientCertData": "x"})})
	_, err := LoadRepoCreds(dir, "")
	if err == nil || !strings.Contains(err.Error(), `Secret "no-url": field url is required`) ||
		!strings.Contains(err.Error(), `Secret "tls": give tlsClientCertData and tlsClientCertKey together`) {
		t.Fatalf("LoadRepoCreds = %v, want both Secrets named with their problem", err)
	}
}
