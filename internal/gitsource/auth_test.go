package gitsource

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	cryptossh "golang.org/x/crypto/ssh"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestEnvAuth(t *testing.T) {
	tests := []struct {
		name     string
		vars     map[string]string
		url      string
		wantUser string // "" means no credentials
		wantPass string
	}{
		{"nothing configured", nil, "https://h/r.git", "", ""},
		{"token", map[string]string{EnvToken: "tok", EnvHosts: "h"}, "https://h/r.git", "git", "tok"},
		{"token with user", map[string]string{EnvToken: "tok", EnvUsername: "x-token-auth", EnvHosts: "h"}, "https://h/r.git", "x-token-auth", "tok"},
		{"user and password over insecure http", map[string]string{EnvUsername: "u", EnvPassword: "p", EnvHosts: "h", EnvInsecure: "true"}, "http://h/r.git", "u", "p"},
		{"URL credentials win", map[string]string{EnvToken: "tok", EnvHosts: "h"}, "https://me:mine@h/r.git", "", ""},
		{"host allowed", map[string]string{EnvToken: "tok", EnvHosts: "H, other"}, "https://h/r.git", "git", "tok"},
		{"host allowed on any port", map[string]string{EnvToken: "tok", EnvHosts: "h"}, "https://h:8443/r.git", "git", "tok"},
		{"host and port allowed", map[string]string{EnvToken: "tok", EnvHosts: "h:8443"}, "https://h:8443/r.git", "git", "tok"},
		{"other port not allowed", map[string]string{EnvToken: "tok", EnvHosts: "h:8443"}, "https://h:9443/r.git", "", ""},
		{"host not allowed", map[string]string{EnvToken: "tok", EnvHosts: "other"}, "https://h/r.git", "", ""},
		{"suffix is not the host", map[string]string{EnvToken: "tok", EnvHosts: "h"}, "https://evil-h/r.git", "", ""},
		{"no basic auth over ssh", map[string]string{EnvToken: "tok", EnvHosts: "h"}, "git@h:r.git", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := EnvAuthFrom(env(tc.vars))
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Auth(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantUser == "" {
				if got != nil {
					t.Fatalf("Auth(%q) = %v, want none", tc.url, got)
				}
				return
			}
			basic, ok := got.(*githttp.BasicAuth)
			if !ok || basic.Username != tc.wantUser || basic.Password != tc.wantPass {
				t.Fatalf("Auth(%q) = %#v, want %s:%s", tc.url, got, tc.wantUser, tc.wantPass)
			}
		})
	}
}

func TestEnvAuthBadKeyFile(t *testing.T) {
	_, err := EnvAuthFrom(env(map[string]string{EnvSSHKeyFile: "/nonexistent/key", EnvHosts: "h"}))
	if err == nil || !strings.Contains(err.Error(), EnvSSHKeyFile) {
		t.Fatalf("EnvAuthFrom with a missing key file: %v", err)
	}
}

func TestCredentialsAgainstServer(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "private")
	s.User, s.Pass = "robot", "hunter2-token"
	ctx := context.Background()

	t.Run("provider", func(t *testing.T) {
		auth, err := EnvAuthFrom(env(map[string]string{EnvUsername: "robot", EnvToken: "hunter2-token",
			EnvHosts: "127.0.0.1", EnvInsecure: "true"}))
		if err != nil {
			t.Fatal(err)
		}
		repos := newRepos(t, Options{Auth: auth})
		sha, err := repos.Resolve(ctx, fx.url, "dev")
		if err != nil || sha != fx.b {
			t.Fatalf("Resolve = %s, %v", sha, err)
		}
		_, release, err := repos.Checkout(ctx, fx.url, sha)
		if err != nil {
			t.Fatal(err)
		}
		release()
	})
	t.Run("in the URL, never printed", func(t *testing.T) {
		repos := newRepos(t, Options{})
		withCreds := strings.Replace(fx.url, "http://", "http://robot:hunter2-token@", 1)
		sha, err := repos.Resolve(ctx, withCreds, "main")
		if err != nil || sha != fx.a {
			t.Fatalf("Resolve = %s, %v", sha, err)
		}
		_, release, err := repos.Checkout(ctx, withCreds, sha)
		if err != nil {
			t.Fatal(err)
		}
		release()

		_, err = repos.Resolve(ctx, withCreds, "no-such-branch")
		assertNoSecret(t, err, "hunter2")
		// A fresh Repos: the listing and clone above are shared by URL, as
		// credentials belong to the repository, not to one Application.
		repos = newRepos(t, Options{})
		wrong := strings.Replace(fx.url, "http://", "http://robot:wrong-secret@", 1)
		_, err = repos.Resolve(ctx, wrong, "main")
		assertNoSecret(t, err, "wrong-secret")
		_, _, err = repos.Checkout(ctx, wrong, strings.Repeat("a", 40))
		assertNoSecret(t, err, "wrong-secret")
	})
	t.Run("missing", func(t *testing.T) {
		repos := newRepos(t, Options{})
		_, err := repos.Resolve(ctx, fx.url, "main")
		if err == nil || !strings.Contains(err.Error(), "authentication required") {
			t.Fatalf("Resolve without credentials: %v", err)
		}
	})
}

func assertNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error")
	}
	t.Logf("error: %v", err)
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks a credential: %v", err)
	}
}

func TestEnvAuthSSH(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := cryptossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile, knownHosts := filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(knownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := EnvAuthFrom(env(map[string]string{EnvSSHKeyFile: keyFile, EnvKnownHosts: knownHosts, EnvToken: "tok", EnvHosts: "github.com"}))
	if err != nil {
		t.Fatal(err)
	}
	for url, wantUser := range map[string]string{
		"git@github.com:org/repo.git":      "git",
		"ssh://deploy@github.com/org/repo": "deploy",
	} {
		got, err := a.Auth(url)
		if err != nil {
			t.Fatal(err)
		}
		keys, ok := got.(*gitssh.PublicKeys)
		if !ok || keys.User != wantUser || keys.HostKeyCallback == nil {
			t.Errorf("Auth(%q) = %#v, want SSH keys for %s with a host key check", url, got, wantUser)
		}
	}
	if got, _ := a.Auth("https://github.com/org/repo"); got == nil {
		t.Error("the token is not used for https next to an SSH key")
	}
}
