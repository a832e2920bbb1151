package app

import (
	"strings"
	"testing"
)

func TestParseSyncOptions(t *testing.T) {
	tests := []struct {
		items   []string
		want    SyncOptions
		wantErr string
	}{
		{items: nil, want: SyncOptions{}},
		{items: []string{"CreateNamespace=true", "ServerSideApply=true", "PruneLast=true"},
			want: SyncOptions{CreateNamespace: true, PruneLast: true}}, // ServerSideApply=true is what Ferry does
		{items: []string{"ServerSideApply=false"}, want: SyncOptions{ClientSideApply: true}},
		{items: []string{"Validate=false", "Prune=false", "Delete=false"},
			want: SyncOptions{ValidateFalse: true, PruneFalse: true, DeleteFalse: true}},
		{items: []string{"Validate=true", "Prune=true"}, want: SyncOptions{}}, // no-op values
		{items: []string{"Replace=true", "Force=true", "ApplyOutOfSyncOnly=true", "FailOnSharedResource=true", "RespectIgnoreDifferences=true", "SkipDryRunOnMissingResource=true"},
			want: SyncOptions{Replace: true, Force: true, ApplyOutOfSyncOnly: true, FailOnSharedResource: true, RespectIgnoreDifferences: true, SkipDryRunOnMissingResource: true}},
		{items: []string{"PrunePropagationPolicy=orphan"}, want: SyncOptions{PrunePropagationPolicy: "orphan"}},
		{items: []string{"CreateNamespace=true", "CreateNamespace=false"}, want: SyncOptions{}}, // last wins
		{items: []string{"CreateNamespace"}, wantErr: `"CreateNamespace" is not in Key=Value form: write e.g. CreateNamespace=true`},
		{items: []string{"createNamespace=true"}, want: SyncOptions{}}, // unknown: ignored, as Argo CD does (a warning)
		{items: []string{"CreateNamespace=yes"}, wantErr: "takes true or false"},
		{items: []string{"Bogus=true", "Retry=true"}, want: SyncOptions{}}, // unknown: ignored (TestUnknownSyncOptionWarns)
		{items: []string{"PrunePropagationPolicy=Foreground"}, wantErr: "foreground, background or orphan"},
		{items: []string{"Delete=confirm"}, want: SyncOptions{DeleteConfirm: true}},
		{items: []string{"Prune=confirm", "Delete=false"}, want: SyncOptions{PruneConfirm: true, DeleteFalse: true}},
		{items: []string{"Prune=false", "Prune=confirm"}, want: SyncOptions{PruneConfirm: true}}, // last wins
		{items: []string{"Prune=confirm", "Prune=true"}, want: SyncOptions{}},
		{items: []string{"Delete=ask"}, wantErr: "Delete takes true, false or confirm"},
		{items: []string{"Validate=1", "Prune=2"}, wantErr: `"Prune=2"`}, // every problem reported
	}
	for _, tt := range tests {
		got, err := ParseSyncOptions(tt.items)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSyncOptions(%q) error = %v, want it to contain %q", tt.items, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSyncOptions(%q) = %+v, %v; want %+v", tt.items, got, err, tt.want)
		}
	}
}

func TestSyncOptionsAnnotationOverridesApp(t *testing.T) {
	app, err := ParseSyncOptions([]string{"ServerSideApply=false", "Replace=true", "CreateNamespace=true"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.WithAnnotation(" ServerSideApply=true, Prune=false,,")
	if err != nil {
		t.Fatal(err)
	}
	want := SyncOptions{CreateNamespace: true, Replace: true, PruneFalse: true}
	if res != want {
		t.Errorf("resource options = %+v, want %+v", res, want)
	}
	if !app.ClientSideApply {
		t.Error("WithAnnotation changed the app's options")
	}
	if got, _ := ParseSyncOptionsAnnotation("Replace=true,Force=true"); !got.Replace || !got.Force {
		t.Errorf("ParseSyncOptionsAnnotation = %+v", got)
	}
	if (SyncOptions{}).PropagationPolicy() != PropagationForeground {
		t.Error("default propagation is not foreground")
	}
}

func TestApplicationSyncOptions(t *testing.T) {
	a, _ := loadFixture(t, "fanout")
	if a == nil {
		t.Fatal("fanout fixture did not parse")
	}
	want := SyncOptions{PrunePropagationPolicy: "background", PruneLast: true}
	if got := a.SyncOptions(); got != want {
		t.Errorf("SyncOptions = %+v, want %+v", got, want)
	}
}

// TestSyncOptionsUnsupported: ServerSideApply=false is refused by name,
// unless Replace=true makes it moot (a replace applies nothing).
func TestSyncOptionsUnsupported(t *testing.T) {
	tests := []struct {
		items   []string
		wantErr string
	}{
		{items: []string{"ServerSideApply=true"}},
		{items: []string{"ServerSideApply=false"}, wantErr: `sync option "ServerSideApply=false" asks for a client-side apply, which Ferry does not do (it always applies server-side): remove it, or write ServerSideApply=true`},
		{items: []string{"ServerSideApply=false", "ServerSideApply=true"}}, // the last one decides
		{items: []string{"ServerSideApply=false", "Replace=true"}},
	}
	for _, tt := range tests {
		o, err := ParseSyncOptions(tt.items)
		if err != nil {
			t.Fatal(err)
		}
		err = o.Unsupported()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
			t.Errorf("Unsupported(%q) = %v, want %q", tt.items, err, tt.wantErr)
		}
	}
}
