package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// corpusApps is the app-of-apps chart of argoproj/argocd-example-apps,
// beside the checkout (see /work/shared/corpus/README.md); it is read in
// place, not copied into the project.
var corpusApps = filepath.Join("..", "..", "..", "shared", "corpus", "argocd-example-apps", "apps")

// renderCorpusApps renders the chart's templates/applications.yaml with the
// few Helm functions it uses, giving one YAML stream of Applications.
func renderCorpusApps(t *testing.T) []byte {
	t.Helper()
	tmplText, err := os.ReadFile(filepath.Join(corpusApps, "templates", "applications.yaml"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("corpus not found at %s", corpusApps)
	}
	if err != nil {
		t.Fatal(err)
	}
	valuesText, err := os.ReadFile(filepath.Join(corpusApps, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(valuesText, &values); err != nil {
		t.Fatal(err)
	}
	funcs := template.FuncMap{
		"quote": func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
		"default": func(def, v any) any {
			if v == nil || v == "" {
				return def
			}
			return v
		},
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(b), "\n"), err
		},
		"nindent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
	}
	tmpl, err := template.New("applications").Funcs(funcs).Option("missingkey=zero").Parse(string(tmplText))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, map[string]any{"Values": values}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestArgoCDExampleApps(t *testing.T) {
	stream := renderCorpusApps(t)

	// The chart's output is a stream of Applications: one file, many
	// documents, which Parse refuses as a whole.
	if _, err := Parse(stream); !errors.Is(err, ErrNotOneApplication) {
		t.Fatalf("Parse(whole stream) = %v, want ErrNotOneApplication", err)
	}

	plugins := map[string]bool{"example.plugin-kasane": true, "example.plugin-kustomized-helm": true, "example.plugin-nix": true}
	seen := 0
	for _, doc := range splitYAML(stream) {
		if len(bytes.TrimSpace(doc.text)) == 0 || string(bytes.TrimSpace(doc.text)) == "---" {
			continue
		}
		seen++
		a, err := Parse(doc.text)
		name := nameInDocument(doc.text)
		if err == nil && plugins[name] != (a.Spec.Source.Plugin != nil) {
			t.Errorf("%s: spec.source.plugin = %+v, want it set only for the plugin apps", name, a.Spec.Source.Plugin)
		}
		if err != nil {
			t.Errorf("%s: Parse: %v", name, err)
			continue
		}
		if err := Validate(a, testOptions); err != nil {
			t.Errorf("%s: Validate: %v", name, err)
			continue
		}
		// An installation that names no in-cluster region refuses them.
		noInCluster := ValidateOptions{Regions: flagRegions(testOptions.Regions.Names(), "")}
		assertFieldErrors(t, Validate(a, noInCluster), []string{"spec.destination.server"})
		targets := a.Destinations(testOptions.Regions)
		if len(targets) != 1 || targets[0].Region != "us-east-1" || targets[0].Namespace == "" {
			t.Errorf("%s: Destinations = %+v, want the in-cluster region with a namespace", name, targets)
		}
		if got := a.Spec.Source.Revision(); got != "master" {
			t.Errorf("%s: Revision = %q, want master", name, got)
		}
		if !a.AutomatedSync() || !a.AutoPrune() || !a.SelfHeal() || !a.SyncOptions().CreateNamespace || !a.CascadeDelete() {
			t.Errorf("%s: want automated sync with prune, self-heal, CreateNamespace and cascading delete", name)
		}
	}
	if seen != 14 {
		t.Errorf("rendered %d Applications, want the 14 of values.yaml", seen)
	}
}

func nameInDocument(doc []byte) string {
	var obj struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	_ = yaml.Unmarshal(doc, &obj)
	return obj.Metadata.Name
}
