package app

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func realworldRoot(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{
		filepath.Join("..", "..", "..", "shared", "corpus", "realworld-apps"),
		"/work/shared/corpus/realworld-apps",
	} {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
	}
	t.Fatal("realworld-apps corpus not found beside the checkout (../shared/corpus) or in /work/shared/corpus")
	return ""
}

// TestProjectCorpus reads every AppProject of the real-world corpus: each
// parses and validates, or is refused only for fields Argo CD has and Ferry
// names (never "unknown field"). The tables pin which file is refused for
// what, and which files' roles are read, so a change in either direction
// shows.
func TestProjectCorpus(t *testing.T) {
	refused := map[string][]string{}
	// withRoles: the files with spec.roles, and the policy lines their
	// roles give an RBAC enforcer (PolicyLines).
	withRoles := map[string]int{
		"cybozu-go__neco-apps__12.yaml":    4,
		"cybozu-go__neco-apps__13.yaml":    4,
		"operate-first__apps__11.yaml":     10,
		"operate-first__apps__12.yaml":     10,
		"operate-first__apps__13.yaml":     9,
		"small-hack__argocd-apps__16.yaml": 2,
		"theepicsaxguy__homelab__5.yaml":   4,
	}
	rolesSeen := 0
	root := realworldRoot(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "\nkind: AppProject") {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			p, err := ParseProject(data)
			if err == nil {
				err = ValidateProject(p)
			}
			want := refused[e.Name()]
			if want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(p.Spec.Roles) > 0 {
					rolesSeen++
				}
				if lines := len(p.PolicyLines()); lines != withRoles[e.Name()] {
					t.Errorf("%d policy lines from %d roles, want %d", lines, len(p.Spec.Roles), withRoles[e.Name()])
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError for %v", err, want)
			}
			if !strings.HasPrefix(err.Error(), "appproject ") {
				t.Errorf("error %q does not start with appproject", err)
			}
			var fields []string
			for _, fe := range ve.Errors {
				fields = append(fields, fe.Field)
				if strings.Contains(fe.Message, "unknown field") {
					t.Errorf("%s: %s", fe.Field, fe.Message)
				}
				if _, known := projectUnsupported[fe.Field]; !known {
					t.Errorf("refused for %s (%s), which is not a field Ferry names as unsupported", fe.Field, fe.Message)
				}
			}
			if !slices.Equal(fields, want) {
				t.Errorf("refused fields = %v, want %v", fields, want)
			}
		})
	}
	if n != 28 {
		t.Errorf("found %d AppProjects in the corpus, want 28", n)
	}
	if rolesSeen != len(withRoles) {
		t.Errorf("%d accepted AppProjects have roles, want %d", rolesSeen, len(withRoles))
	}
}
