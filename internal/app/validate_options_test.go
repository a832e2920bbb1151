package app

import (
	"strings"
	"testing"
)

// TestValidateOptionsRefusedByName: options Ferry would otherwise take and
// ignore are refused, each with the app, the field and the fix; those that
// say what Ferry does are accepted.
func TestValidateOptionsRefusedByName(t *testing.T) {
	const compare = `metadata.annotations["argocd.argoproj.io/compare-options"]`
	syncOptions := func(items ...string) func(a *Application) {
		return func(a *Application) { a.Spec.SyncPolicy = &SyncPolicy{SyncOptions: items} }
	}
	compareOptions := func(v string) func(a *Application) {
		return func(a *Application) { a.Metadata.Annotations = map[string]string{AnnotationCompareOptions: v} }
	}
	finalizers := func(fs ...string) func(a *Application) {
		return func(a *Application) { a.Metadata.Finalizers = fs }
	}
	tests := []struct {
		name   string
		mutate func(a *Application)
		want   string // the whole error; empty: valid
	}{
		{name: "ServerSideApply=true", mutate: syncOptions("ServerSideApply=true")},
		{name: "ServerSideApply=false", mutate: syncOptions("CreateNamespace=true", "ServerSideApply=false"),
			want: `application "web": spec.syncPolicy.syncOptions[1]: sync option "ServerSideApply=false" asks for a client-side apply, which Ferry does not do (it always applies server-side): remove it, or write ServerSideApply=true`},
		{name: "ServerSideApply=false with Replace=true", mutate: syncOptions("ServerSideApply=false", "Replace=true")},
		{name: "FailOnSharedResource either way", mutate: syncOptions("FailOnSharedResource=true", "FailOnSharedResource=false")},

		{name: "ServerSideDiff=true and IncludeMutationWebhook=true", mutate: compareOptions("ServerSideDiff=true, IncludeMutationWebhook=true")},
		{name: "ServerSideDiff=false", mutate: compareOptions("ServerSideDiff=false"),
			want: `application "web": ` + compare + `: compare option "ServerSideDiff=false" asks for a client-side diff: Ferry always compares server-side (a dry-run apply); remove the option, or write ServerSideDiff=true`},
		{name: "IncludeMutationWebhook=false", mutate: compareOptions("IncludeMutationWebhook=false"),
			want: `application "web": ` + compare + `: compare option "IncludeMutationWebhook=false" asks to leave out what mutating webhooks change: Ferry's comparison always includes what mutating webhooks change (a dry-run apply goes through admission); remove the option, or write IncludeMutationWebhook=true`},
		// For the app of apps that manages the Application as a resource.
		{name: "IgnoreExtraneous on the app", mutate: compareOptions("ServerSideDiff=true, IgnoreExtraneous")},
		{name: "unknown compare options, every one", mutate: compareOptions("serverSideDiff=true,Bogus"),
			want: `application "web": ` + compare + `: compare option "serverSideDiff=true" is unknown: did you mean ServerSideDiff?; ` +
				compare + `: compare option "Bogus" is unknown here: known options are ServerSideDiff=true, IncludeMutationWebhook=true`},

		{name: "resources finalizer", mutate: finalizers(ResourcesFinalizer)},
		{name: "foreground finalizer", mutate: finalizers(ForegroundFinalizer)},
		{name: "background finalizer", mutate: finalizers(BackgroundFinalizer)},
		{name: "other finalizer", mutate: finalizers(ResourcesFinalizer, "example.com/keep"),
			want: `application "web": metadata.finalizers[1]: "example.com/keep" is not a finalizer Ferry acts on: write resources-finalizer.argocd.argoproj.io (deleting the app deletes its resources, foreground) or resources-finalizer.argocd.argoproj.io/background, or remove it`},
		{name: "misspelt finalizer suffix", mutate: finalizers(ResourcesFinalizer + "/orphan"),
			want: `application "web": metadata.finalizers[0]: "resources-finalizer.argocd.argoproj.io/orphan" is not a finalizer Ferry acts on: write resources-finalizer.argocd.argoproj.io (deleting the app deletes its resources, foreground) or resources-finalizer.argocd.argoproj.io/background, or remove it`},
		{name: "post-delete finalizer", mutate: finalizers("post-delete-finalizer.argocd.argoproj.io"),
			want: `application "web": metadata.finalizers[0]: "post-delete-finalizer.argocd.argoproj.io" is added by Argo CD's controller itself; Ferry runs PostDelete hooks when it deletes the app's resources: remove it, and add resources-finalizer.argocd.argoproj.io for a cascading delete`},
		{name: "two propagation policies", mutate: finalizers(ResourcesFinalizer, BackgroundFinalizer),
			want: `application "web": metadata.finalizers[1]: "resources-finalizer.argocd.argoproj.io/background" asks for background deletion and an earlier finalizer for foreground: keep one of them`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validApp()
			tt.mutate(a)
			err := Validate(a, testOptions)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("Validate accepted it")
			case tt.want != "" && err.Error() != tt.want:
				t.Errorf("Validate error\n got: %s\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestDeletePropagation(t *testing.T) {
	for fs, want := range map[string]string{
		"":                  "",
		ResourcesFinalizer:  PropagationForeground,
		ForegroundFinalizer: PropagationForeground,
		BackgroundFinalizer: PropagationBackground,
	} {
		a := validApp()
		if fs != "" {
			a.Metadata.Finalizers = []string{fs}
		}
		if got := a.DeletePropagation(); got != want || a.CascadeDelete() != (want != "") {
			t.Errorf("finalizer %q: DeletePropagation = %q, CascadeDelete = %t; want %q", fs, got, a.CascadeDelete(), want)
		}
	}
}

func TestParseCompareOptions(t *testing.T) {
	tests := []struct {
		value   string
		want    CompareOptions
		wantErr string
	}{
		{value: "", want: CompareOptions{}},
		{value: " IgnoreExtraneous ,", want: CompareOptions{IgnoreExtraneous: true}},
		{value: "ServerSideDiff=true",
			wantErr: `compare option "ServerSideDiff=true" is an Application's, not a resource's: set it in the Application's metadata.annotations["argocd.argoproj.io/compare-options"], or remove it here`},
		{value: "IgnoreExtraneous,IncludeMutationWebhook=true",
			wantErr: `compare option "IncludeMutationWebhook=true" is an Application's, not a resource's`},
		{value: "ignoreExtraneous", wantErr: `compare option "ignoreExtraneous" is unknown: did you mean IgnoreExtraneous?`},
		{value: "IgnoreExtraneous=true", wantErr: `compare option "IgnoreExtraneous=true" is unknown here: known options are IgnoreExtraneous`},
	}
	for _, tt := range tests {
		got, err := ParseCompareOptions(tt.value)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseCompareOptions(%q) = %+v, %v; want %+v", tt.value, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("ParseCompareOptions(%q) error = %v, want %q", tt.value, err, tt.wantErr)
		}
	}
}

// TestIgnoresExtraneous: an Application's own compare-options annotation
// says whether its app of apps counts it once Git no longer has it.
func TestIgnoresExtraneous(t *testing.T) {
	for value, want := range map[string]bool{
		"":                                      false,
		"ServerSideDiff=true":                   false,
		"IgnoreExtraneous":                      true,
		"ServerSideDiff=true, IgnoreExtraneous": true,
		"ignoreExtraneous":                      false,
	} {
		a := validApp()
		a.Metadata.Annotations = map[string]string{AnnotationCompareOptions: value}
		if got := a.IgnoresExtraneous(); got != want {
			t.Errorf("compare-options %q: IgnoresExtraneous() = %v, want %v", value, got, want)
		}
	}
}
