package app

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const minimalYAML = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
spec:
  source:
    repoURL: https://git.example.com/org/apps.git
  destination:
    name: us-east-1
`

func TestParseForms(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantErr  string // substring; empty means success
		notOne   bool
		wantName string
	}{
		{name: "plain", input: minimalYAML, wantName: "web"},
		{name: "byte order mark", input: "\xef\xbb\xbf" + minimalYAML, wantName: "web"},
		{name: "leading marker and comments", input: "# app\n---\n" + minimalYAML + "---\n# end\n", wantName: "web"},
		{name: "document end marker", input: minimalYAML + "...\n", wantName: "web"},
		{name: "CRLF line ends", input: strings.ReplaceAll(minimalYAML, "\n", "\r\n"), wantName: "web"},
		{name: "marker with comment", input: "--- # the app\n" + minimalYAML, wantName: "web"},
		{name: "json", input: `{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"j"},
			"spec":{"source":{"repoURL":"https://h/r.git"},"destination":{"name":"us-east-1"}}}`, wantName: "j"},
		{name: "json syntax error names the line", input: "{\n\"kind\": \"Application\",\n\"spec\": {,}\n}", wantErr: "JSON syntax error on line 3"},
		{name: "yaml flow style", input: `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: f}}`, wantName: "f"},
		{name: "json array", input: `[{"kind":"Application"},{"kind":"Application"}]`, wantErr: "JSON array of 2 objects", notOne: true},
		{name: "two json values", input: `{"kind":"Application"} {"kind":"Application"}`, wantErr: "several JSON values", notOne: true},
		{name: "empty", input: "", notOne: true},
		{name: "only whitespace", input: "  \n\n", notOne: true},
		{name: "scalar", input: "hello\n", wantErr: `the string "hello"`, notOne: true},
		{name: "yaml list", input: "- a\n- b\n", wantErr: "list of 2 items", notOne: true},
		{name: "second document line", input: minimalYAML + "---\n\n" + minimalYAML, wantErr: "lines 1, 10", notOne: true},
		{name: "syntax error in second document names its line", input: minimalYAML + "---\nkind: [\n", wantErr: "line 11"},
		{name: "ApplicationSet", input: "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: x}\n", wantErr: "ApplicationSet is not supported"},
		{name: "unknown top-level field", input: minimalYAML + "extra: 1\n", wantErr: "extra: unknown field"},
		{name: "operation refused", input: minimalYAML + "operation:\n  sync: {}\n", wantErr: "ferry app sync"},
		{name: "helm passCredentials", input: strings.Replace(minimalYAML, "    repoURL:", "    helm:\n      passCredentials: true\n    repoURL:", 1),
			wantName: "web"},
		{name: "labels must be strings", input: strings.Replace(minimalYAML, "  name: web\n", "  name: web\n  labels:\n    tier: 1\n", 1),
			wantErr: `metadata.labels["tier"]: expected a string`},
		{name: "null fields are zero", input: minimalYAML + "  syncPolicy: null\n", wantName: "web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Parse([]byte(tt.input))
			if tt.wantErr == "" && !tt.notOne {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if a.Metadata.Name != tt.wantName {
					t.Errorf("name = %q, want %q", a.Metadata.Name, tt.wantName)
				}
				return
			}
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrNotOneApplication) != tt.notOne {
				t.Errorf("errors.Is(ErrNotOneApplication) = %t, want %t (%v)", !tt.notOne, tt.notOne, err)
			}
		})
	}
}

func TestParseKeepsFieldsAsWritten(t *testing.T) {
	a, _ := loadFixture(t, "fanout")
	if a == nil {
		t.Fatal("fanout fixture did not parse")
	}
	if a.Spec.Source.TargetRevision != "v1.4.2" || a.Spec.PollInterval != "30s" {
		t.Errorf("source or pollInterval changed: %+v %q", a.Spec.Source, a.Spec.PollInterval)
	}
	if got := a.Spec.SyncPolicy.Retry.Backoff.Duration; got != "10" {
		t.Errorf("backoff duration = %q, want it as written", got)
	}
	if a.Spec.Source.Kustomize.CommonLabels["app.kubernetes.io/part-of"] != "shop" {
		t.Errorf("kustomize commonLabels lost: %+v", a.Spec.Source.Kustomize)
	}
	h, _ := loadFixture(t, "helm")
	if h == nil || h.Spec.Source.Helm.ValuesObject["image"].(map[string]any)["tag"] != "0.2" {
		t.Errorf("helm valuesObject lost: %+v", h)
	}
}

func TestSplitYAMLLines(t *testing.T) {
	docs := splitYAML([]byte("a: 1\n---\nb: 2\n...\n---\nc: 3\n"))
	var lines []int
	for _, d := range docs {
		lines = append(lines, d.line)
	}
	// "a" on 1; "---" opens the next on 2; "..." ends it, so the empty one
	// after starts on 5, where the last "---" opens "c".
	want := []int{1, 2, 5, 5}
	if !slices.Equal(lines, want) {
		t.Errorf("document lines = %v, want %v", lines, want)
	}
}
