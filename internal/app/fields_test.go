package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgoFieldsKept: fields real Argo CD files carry are read and kept as
// written, for the parts of Ferry that honour or show them.
func TestArgoFieldsKept(t *testing.T) {
	read := func(name string) *Application {
		t.Helper()
		a, err := loadFixture(t, name)
		if err != nil {
			t.Fatalf("%s refused: %v", name, err)
		}
		return a
	}
	if a := read("revision-history-limit"); a.Spec.RevisionHistoryLimit == nil || *a.Spec.RevisionHistoryLimit != 5 || a.HistoryLimit() != 5 {
		t.Errorf("revisionHistoryLimit = %v, HistoryLimit() = %d, want 5", a.Spec.RevisionHistoryLimit, a.HistoryLimit())
	}
	if a := read("info"); len(a.Spec.Info) != 1 || a.Spec.Info[0] != (Info{Name: "docs", Value: "https://example.com"}) {
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
