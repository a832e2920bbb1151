package app

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgoFieldsKept: fields real Argo CD files carry are read and kept as
// written, for the parts of Ferry that honour or show them.
func TestArgoFieldsKept(t *testing.T) {
	if a := read(t, "revision-history-limit"); a.Spec.RevisionHistoryLimit == nil || *a.Spec.RevisionHistoryLimit != 5 || a.HistoryLimit() != 5 {
		t.Errorf("revisionHistoryLimit = %v, HistoryLimit() = %d, want 5", a.Spec.RevisionHistoryLimit, a.HistoryLimit())
	}
	if a := read(t, "info"); len(a.Spec.Info) != 1 || a.Spec.Info[0] != (Info{Name: "docs", Value: "https://example.com"}) {
		t.Errorf("info = %+v", a.Spec.Info)
	}

	base := readFixture(t, "minimal")
	a := mustRead(t, strings.Replace(base, "  destination:", `    helm:
      version: v3
  destination:`, 1)+`  syncPolicy:
    retry:
      limit: 2
      refresh: true
`)
	if a.Spec.Source.Helm.Version != "v3" || !a.Spec.SyncPolicy.Retry.Refresh {
		t.Errorf("helm.version %q, retry.refresh %t", a.Spec.Source.Helm.Version, a.Spec.SyncPolicy.Retry.Refresh)
	}
	a = mustRead(t, strings.Replace(base, "metadata:\n", `metadata:
  namespace: argocd
  labels: {team: web}
  annotations: {note: kept}
  finalizers: [resources-finalizer.argocd.argoproj.io]
`, 1))
	if md := a.Metadata; md.Namespace != "argocd" || md.Labels["team"] != "web" || md.Annotations["note"] != "kept" || len(md.Finalizers) != 1 {
		t.Errorf("metadata = %+v", md)
	}
}

func TestArgoFieldsRefused(t *testing.T) {
	base := readFixture(t, "minimal")
	for _, tc := range []struct {
		name, text, field, says string
	}{
		{"helm v2", strings.Replace(base, "  destination:", "    helm: {version: v2}\n  destination:", 1), "spec.source.helm.version", "Helm 2 is not supported"},
		{"helm v4", strings.Replace(base, "  destination:", "    helm: {version: \"4\"}\n  destination:", 1), "spec.source.helm.version", "write v3"},
		{"negative history", base + "  revisionHistoryLimit: -1\n", "spec.revisionHistoryLimit", "negative"},
		{"info without name", base + "  info: [{value: x}]\n", "spec.info[0].name", "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Parse([]byte(tc.text))
			if err == nil {
				err = Validate(a, testOptions)
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want it to say %q", err, tc.says)
			}
			assertFieldErrors(t, err, []string{tc.field})
		})
	}
}

func read(t *testing.T, name string) *Application {
	t.Helper()
	a, err := loadFixture(t, name)
	if err != nil {
		t.Fatalf("%s refused: %v", name, err)
	}
	return a
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mustRead(t *testing.T, text string) *Application {
	t.Helper()
	a, err := Parse([]byte(text))
	if err == nil {
		err = Validate(a, testOptions)
	}
	if err != nil {
		t.Fatalf("refused: %v\n%s", err, text)
	}
	return a
}

// TestOneSource: a one-entry spec.sources is read as spec.source, as Argo CD
// renders it; errors name the field where it was written.
func TestOneSource(t *testing.T) {
	a := read(t, "one-source")
	if s := a.Spec.Source; s.RepoURL != "https://git.example.com/org/apps.git" || s.Path != "guestbook" || s.TargetRevision != "main" {
		t.Errorf("spec.source = %+v", s)
	}
	// An empty list is no list, as in Argo CD.
	base := readFixture(t, "minimal")
	mustRead(t, strings.Replace(base, "  source:", "  sources: []\n  source:", 1))

	text := strings.Replace(readFixture(t, "one-source"), "    path: guestbook\n", "    path: /guestbook\n    helm: {version: v2}\n", 1)
	a, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	err = Validate(a, testOptions)
	assertFieldErrors(t, err, []string{"spec.sources[0].path", "spec.sources[0].helm.version"})
	if strings.Contains(err.Error(), "spec.source.") {
		t.Errorf("error names spec.source, not the spec.sources[0] the file has: %v", err)
	}
}

// TestSeveralSources: several sources are read as spec.sources, each
// entry's fields checked as spec.source's and named where they are
// written; ref and name are theirs.
func TestSeveralSources(t *testing.T) {
	a := read(t, "multi-source")
	if !a.IsMultiSource() || len(a.SourceList()) != 3 || a.Spec.Source.RepoURL != "" {
		t.Fatalf("sources = %+v, source = %+v", a.Spec.Sources, a.Spec.Source)
	}
	if s := a.Spec.Sources[1]; s.Ref != "values" || !s.RendersNothing() {
		t.Errorf("ref source = %+v", s)
	}
	if got := RefsOf(a.Spec.Sources[0]); len(got) != 1 || got[0] != "values" {
		t.Errorf("refs of the chart = %v", got)
	}
	text := strings.Replace(readFixture(t, "multi-source"), "    ref: values\n", "    ref: values\n    pathh: x\n    helm: {version: v2}\n", 1)
	_, err := Parse([]byte(text))
	assertFieldErrors(t, err, []string{"spec.sources[1].pathh"})
	if strings.Contains(err.Error(), ".ref") {
		t.Errorf("ref, which belongs to multi-source, is named: %v", err)
	}
	base := readFixture(t, "minimal")
	_, err = Parse([]byte(strings.Replace(base, "  source:", "  sources: [{repoURL: https://git.example.com/org/apps.git}]\n  source:", 1)))
	assertFieldErrors(t, err, []string{"spec.sources"})

	// Every source a ref: nothing to deploy.
	text = strings.Replace(readFixture(t, "multi-source"), "    path: guestbook\n", "    ref: more\n", 1)
	text = strings.Replace(text, "    chart: nginx\n", "    ref: chart\n", 1)
	a, err = Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	assertFieldErrors(t, Validate(a, testOptions), []string{"spec.sources"})

	// A $ref value file in an app of one source.
	text = strings.Replace(readFixture(t, "helm"), "valueFiles:\n", "valueFiles:\n      - $values/prod.yaml\n", 1)
	if a, err = Parse([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := Validate(a, testOptions); err == nil || !strings.Contains(err.Error(), "only an entry of spec.sources can do") {
		t.Errorf("$values in spec.source: %v", err)
	}
}

// TestMultiSourceJSON: a multi-source app encodes without spec.source, and
// reads back the same.
func TestMultiSourceJSON(t *testing.T) {
	a := read(t, "multi-source")
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"source":`) {
		t.Errorf("encoded with spec.source: %s", b)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.SpecDigest() != a.SpecDigest() {
		t.Errorf("read back differently: %s", b)
	}
}

// TestIgnoreDifferencesGroupKindOnly: Argo CD accepts an entry naming only
// the resources, which then ignores nothing (internal/diff's tests show
// that); so does Ferry.
func TestIgnoreDifferencesGroupKindOnly(t *testing.T) {
	a := mustRead(t, readFixture(t, "minimal")+"  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n")
	if got := a.Spec.IgnoreDifferences; len(got) != 1 || got[0].Kind != "Deployment" || got[0].Group != "apps" {
		t.Errorf("ignoreDifferences = %+v", got)
	}
	_, err := loadFixture(t, "invalid-ignore-differences")
	var ve *ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			if strings.HasPrefix(fe.Field, "spec.ignoreDifferences[1]") {
				t.Errorf("entry 1 (kind: Secret alone) refused: %v", fe)
			}
		}
	}
}

// TestLongNames: an app name may be as long as Argo CD allows (a DNS
// subdomain, 253 characters); the Helm release name, the app's unless
// helm.releaseName is set, is what must fit Helm's 53.
func TestLongNames(t *testing.T) {
	name := strings.Repeat("long-name.", 10) + "app" // 103 characters
	base := strings.Replace(readFixture(t, "minimal"), "name: minimal", "name: "+name, 1)
	if a := mustRead(t, base); a.Metadata.Name != name {
		t.Errorf("name = %q", a.Metadata.Name)
	}
	withHelm := strings.Replace(base, "  destination:", "    helm: {valueFiles: [values.yaml]}\n  destination:", 1)
	a, err := Parse([]byte(withHelm))
	if err != nil {
		t.Fatal(err)
	}
	err = Validate(a, testOptions)
	assertFieldErrors(t, err, []string{"spec.source.helm.releaseName"})
	if err == nil || !strings.Contains(err.Error(), "Helm allows 53") {
		t.Errorf("err = %v, want it to say Helm allows 53", err)
	}
	mustRead(t, strings.Replace(withHelm, "helm: {", "helm: {releaseName: short, ", 1))
}
