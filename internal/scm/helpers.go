package scm

import (
	"fmt"
	"slices"
	"strings"
)

// hasAll reports whether got holds every one of want.
func hasAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// cloneURL picks a repository's URL by the generator's cloneProtocol
// (empty: ssh, as in Argo CD).
func cloneURL(protocol, ssh, https string) (string, error) {
	switch protocol {
	case "", "ssh":
		return ssh, nil
	case "https":
		return https, nil
	}
	return "", fmt.Errorf("cloneProtocol %q: use ssh or https", protocol)
}

// atBranch is r at branch, with its head commit.
func atBranch(r Repository, branch, sha string) Repository {
	r.Branch, r.SHA = branch, sha
	return r
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segs {
		segs[i] = escape(s)
	}
	return strings.Join(segs, "/")
}
