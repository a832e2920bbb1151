package gitsource

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

// TestEnvCredentialsNeedHosts: a credential without FERRY_GIT_HOSTS stops
// the worker at start, naming both variables.
func TestEnvCredentialsNeedHosts(t *testing.T) {
	for _, name := range []string{EnvToken, EnvPassword, EnvUsername, EnvSSHKeyFile} {
		_, err := EnvAuthFrom(env(map[string]string{name: "x"}))
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), EnvHosts) {
			t.Errorf("%s without %s: %v, want an error naming both", name, EnvHosts, err)
		}
	}
	if _, err := EnvAuthFrom(env(map[string]string{EnvToken: "x", EnvHosts: "h", EnvInsecure: "maybe"})); err == nil ||
		!strings.Contains(err.Error(), EnvInsecure) {
		t.Errorf("%s=maybe: %v, want an error naming it", EnvInsecure, err)
	}
}

// TestCredentialGoesOnlyToItsHost runs real ls-remote and fetches against
// two loopback Git servers: A needs the credential, B serves a public repo
// and records every Authorization header it receives.
func TestCredentialGoesOnlyToItsHost(t *testing.T) {
	ctx := context.Background()
	a, b := newGitServer(t), newGitServer(t)
	fxA, fxB := newFixtureRepo(t, a, "private"), newFixtureRepo(t, b, "public")
	a.User, a.Pass = "robot", "hunter2-token"
	hostA := mustHost(t, fxA.url)
	// B on the same machine under another name, and under the same name on
	// its own port: neither is A.
	urlsB := []string{fxB.url, strings.Replace(fxB.url, "127.0.0.1", "localhost", 1)}

	t.Run("sent to A, never to B", func(t *testing.T) {
		auth, err := EnvAuthFrom(env(map[string]string{EnvUsername: "robot", EnvToken: "hunter2-token",
			EnvHosts: hostA, EnvInsecure: "true"}))
		if err != nil {
			t.Fatal(err)
		}
		repos := newRepos(t, Options{Auth: auth})
		sha, err := repos.Resolve(ctx, fxA.url, "dev")
		if err != nil || sha != fxA.b {
			t.Fatalf("Resolve on A = %s, %v", sha, err)
		}
		if _, release, err := repos.Checkout(ctx, fxA.url, sha); err != nil {
			t.Fatalf("Checkout on A: %v", err)
		} else {
			release()
		}
		if len(a.Authorizations()) == 0 {
			t.Fatal("A received no Authorization header: the test proves nothing")
		}
		for _, u := range urlsB {
			sha, err := repos.Resolve(ctx, u, "main")
			if err != nil || sha != fxB.a {
				t.Fatalf("Resolve on B (%s) = %s, %v", u, sha, err)
			}
			if _, release, err := repos.Checkout(ctx, u, sha); err != nil {
				t.Fatalf("Checkout on B (%s): %v", u, err)
			} else {
				release()
			}
		}
		if got := b.Authorizations(); len(got) != 0 {
			t.Fatalf("B received %d Authorization headers, want none", len(got))
		}
	})

	t.Run("not sent over plain http without insecure", func(t *testing.T) {
		before := len(a.Authorizations())
		auth, err := EnvAuthFrom(env(map[string]string{EnvToken: "hunter2-token", EnvHosts: hostA}))
		if err != nil {
			t.Fatal(err)
		}
		repos := newRepos(t, Options{Auth: auth})
		_, err = repos.Resolve(ctx, fxA.url, "main")
		if err == nil || !IsCredentialRefused(err) || !strings.Contains(err.Error(), "127.0.0.1") ||
			!strings.Contains(err.Error(), EnvInsecure) || !strings.Contains(err.Error(), "https://") {
			t.Fatalf("Resolve over http without %s: %v, want a refusal naming the host and the fix", EnvInsecure, err)
		}
		assertNoSecret(t, err, "hunter2")
		_, _, err = repos.Checkout(ctx, fxA.url, fxA.a)
		if !IsCredentialRefused(err) {
			t.Fatalf("Checkout over http without %s: %v, want a refusal", EnvInsecure, err)
		}
		if got := a.Authorizations()[before:]; len(got) != 0 {
			t.Fatalf("A received %d Authorization headers over plain http, want none", len(got))
		}
	})
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
