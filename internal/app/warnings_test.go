package app

import (
	"strings"
	"testing"
)

// TestUnknownSyncOptionWarns: a sync option Argo CD does not have (the
// corpus's Retry=true, a key in the wrong case) is accepted, as Argo CD
// ignores it, and named in a warning with the app, the field and the
// option; a known option with a wrong value is still refused.
func TestUnknownSyncOptionWarns(t *testing.T) {
	a := validApp()
	a.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"CreateNamespace=true", "Retry=true", "createNamespace=true"}}
	if err := Validate(a, testOptions); err != nil {
		t.Fatalf("Validate refused unknown sync options: %v", err)
	}
	got := a.Warnings()
	want := []string{
		`application "web": spec.syncPolicy.syncOptions[1]: sync option "Retry=true" is unknown: known options are CreateNamespace=true|false`,
		`application "web": spec.syncPolicy.syncOptions[2]: sync option "createNamespace=true" is unknown: did you mean CreateNamespace=true?; it is ignored, as Argo CD ignores it`,
	}
	if len(got) != len(want) {
		t.Fatalf("warnings = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) && !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %s\nwant it to contain %s", i, got[i], want[i])
		}
		if !strings.Contains(got[i], "it is ignored, as Argo CD ignores it") {
			t.Errorf("warning %d does not say it is ignored: %s", i, got[i])
		}
	}
	a.Spec.SyncPolicy.SyncOptions = []string{"CreateNamespace=yes", "Retry=true"}
	err := Validate(a, testOptions)
	if err == nil || !strings.Contains(err.Error(), "spec.syncPolicy.syncOptions[0]") || strings.Contains(err.Error(), "Retry=true") {
		t.Errorf("a known option's wrong value: %v, want syncOptions[0] refused and Retry=true not named", err)
	}
	if w := validApp().Warnings(); len(w) != 0 {
		t.Errorf("an app without unknown options warns: %q", w)
	}
}

// TestPlaceholderRepoURLWarns: a repoURL whose scheme is no Git transport
// (the corpus's cnoe://name, which idpbuilder rewrites) is accepted, as
// Argo CD stores such an Application, and named in a warning with the
// app, the field and the forms Ferry fetches; git:// and ftp:// are
// transports Ferry refuses, with their fix.
func TestPlaceholderRepoURLWarns(t *testing.T) {
	a := validApp()
	a.Spec.Source = Source{}
	a.Spec.Sources = []Source{
		{RepoURL: "https://charts.example.com", Chart: "hub", TargetRevision: "3.3.7"},
		{RepoURL: "cnoe://jupyterhub", TargetRevision: "HEAD", Path: "manifests"},
	}
	if err := Validate(a, testOptions); err != nil {
		t.Fatalf("Validate refused a placeholder repoURL: %v", err)
	}
	got := a.Warnings()
	if len(got) != 1 || !strings.Contains(got[0], `application "web": spec.sources[1].repoURL: "cnoe://jupyterhub": scheme "cnoe" is no Git transport`) ||
		!strings.Contains(got[0], "https://host/org/repo.git") {
		t.Errorf("warnings = %q, want one naming the app, spec.sources[1].repoURL, the scheme and the forms to write", got)
	}
	a.Spec.Sources[1].RepoURL = "git://git.example.com/org/apps.git"
	if err := Validate(a, testOptions); err == nil || !strings.Contains(err.Error(), `spec.sources[1].repoURL: scheme "git" is not supported`) {
		t.Errorf("git:// = %v, want refused by name", err)
	}
}
