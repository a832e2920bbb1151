package app

import (
	"slices"
	"testing"
)

// TestGitRepoURLs: every Git repository of an app's sources, once each, in
// the order of the sources, ref sources included; Helm and OCI chart
// repositories send no pushes and are left out.
func TestGitRepoURLs(t *testing.T) {
	multi := &Application{Spec: Spec{Sources: []Source{
		{RepoURL: "https://charts.example.com", Chart: "web"},
		{RepoURL: "https://git.example.com/manifests.git", Path: "base"},
		{RepoURL: "https://git.example.com/values.git", Ref: "values"},
		{RepoURL: "https://git.example.com/manifests.git", Path: "overlay"},
		{RepoURL: "oci://registry.example.com/charts", Chart: "db"},
	}}}
	want := []string{"https://git.example.com/manifests.git", "https://git.example.com/values.git"}
	if got := multi.GitRepoURLs(); !slices.Equal(got, want) {
		t.Errorf("multi-source: %v, want %v", got, want)
	}
	single := &Application{Spec: Spec{Source: Source{RepoURL: "https://git.example.com/manifests.git"}}}
	if got := single.GitRepoURLs(); !slices.Equal(got, []string{"https://git.example.com/manifests.git"}) {
		t.Errorf("single source: %v", got)
	}
	chart := &Application{Spec: Spec{Source: Source{RepoURL: "https://charts.example.com", Chart: "web"}}}
	if got := chart.GitRepoURLs(); len(got) != 0 {
		t.Errorf("chart source: %v, want none", got)
	}
}
