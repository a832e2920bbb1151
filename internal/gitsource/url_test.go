package gitsource

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{
			"https://github.com/org/repo",
			"https://github.com/org/repo.git",
			"https://github.com/org/repo/",
			"https://GitHub.com/org/repo.git/",
			"HTTPS://github.com:443/org/repo",
			"http://github.com/org/repo",
			"https://user:token@github.com/org/repo.git",
			"git@github.com:org/repo.git",
			"git@GITHUB.COM:org/repo",
			"ssh://git@github.com/org/repo.git",
			"ssh://git@github.com:22/org/repo",
			"  https://github.com/org/repo  ",
			"https://github.com//org/repo",
		}, "github.com/org/repo"},
		{[]string{"https://gitlab.example.com:8443/group/sub/repo.git"}, "gitlab.example.com:8443/group/sub/repo"},
		{[]string{"ssh://git@host:2222/repo.git"}, "host:2222/repo"},
		{[]string{"https://github.com/Org/Repo"}, "github.com/Org/Repo"},
		{[]string{"file:///srv/git/repo.git", "/srv/git/repo.git", "/srv/git/repo/"}, "file:///srv/git/repo"},
		{[]string{""}, ""},
	}
	for _, tc := range tests {
		for _, in := range tc.in {
			if got := NormalizeURL(in); got != tc.want {
				t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, tc.want)
			}
		}
	}
	if NormalizeURL("/srv/github.com/org/repo") == NormalizeURL("https://github.com/org/repo") {
		t.Error("a local path collides with a host")
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:s3cret@github.com/org/repo.git", "https://github.com/org/repo.git"},
		{"https://ghp_token@github.com/org/repo.git", "https://github.com/org/repo.git"},
		{"ssh://git@github.com/org/repo.git", "ssh://git@github.com/org/repo.git"},
		{"ssh://git:pw@github.com/org/repo.git", "ssh://github.com/org/repo.git"},
		{"git@github.com:org/repo.git", "git@github.com:org/repo.git"},
		{"https://github.com/org/repo.git", "https://github.com/org/repo.git"},
	}
	for _, tc := range tests {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactErr(t *testing.T) {
	base := errors.New("boom")
	raw := "https://bob:p%40ss@host/r.git"
	err := redactErr(fmt.Errorf("Get %q: %w; password p@ss", raw, base), raw)
	if strings.Contains(err.Error(), "p@ss") || strings.Contains(err.Error(), "p%40ss") || strings.Contains(err.Error(), "bob") {
		t.Errorf("credential in %q", err)
	}
	if !errors.Is(err, base) {
		t.Error("redactErr broke the error chain")
	}
}

func TestURLHashIsStableAndSafe(t *testing.T) {
	a := urlHash("git@github.com:org/repo.git")
	if a != urlHash("https://github.com/org/repo") {
		t.Error("one repository, two hashes")
	}
	if len(a) != 64 || !isHex(a) || urlHash("https://github.com/../../etc") == a {
		t.Errorf("urlHash = %q", a)
	}
}
