package app

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// corpusAccepted is how many of the corpus's Applications Read accepts
// with an in-cluster region set: a floor, so that a change refusing more
// shows; raise it as features land.
const corpusAccepted = 131

// corpusCauses are the only fields a corpus Application may be refused
// for (paths without list indexes), each a feature Argo CD has and Ferry
// names as not supported yet, or a value Argo CD could not use either.
var corpusCauses = map[string]string{
	"spec.template": "not an Application field: kubectl's strict field validation refuses it too",
	// The same file's repoURL has no scheme (github.com/org/repo.git),
	// which no Git fetches.
	"spec.source.repoURL": "a repoURL without a scheme, in the file refused for spec.template",
}

// TestApplicationCorpus reads every Application of the real-world corpus as
// `ferry app apply` does (Read, with an in-cluster region). It checks how
// many are accepted and that each refusal is for known causes only (Read
// names them all at once: a file refused for its chart also has a bad
// repoURL named).
func TestApplicationCorpus(t *testing.T) {
	root := realworldRoot(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	opts := ValidateOptions{Regions: flagRegions(nil, "in-cluster-region")}
	total, accepted := 0, 0
	causes := map[string]int{}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Kind string }
		if err := yaml.Unmarshal(data, &head); err != nil || head.Kind != Kind {
			continue
		}
		total++
		_, err = Read(data, opts)
		if err == nil {
			accepted++
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		seen := map[string]bool{}
		for _, fe := range ve.Errors {
			cause := indexRE.ReplaceAllString(fe.Field, "")
			if _, ok := corpusCauses[cause]; !ok {
				t.Errorf("%s: refused for %s, not a known cause: %s", e.Name(), fe.Field, fe.Message)
			}
			if !seen[cause] {
				causes[cause]++
				seen[cause] = true
			}
		}
	}
	if total != 132 {
		t.Errorf("found %d Applications in the corpus, want 132", total)
	}
	if accepted < corpusAccepted {
		t.Errorf("accepted %d of %d Applications, want at least %d", accepted, total, corpusAccepted)
	}
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(causes)) {
		lines = append(lines, fmt.Sprintf("%s %d", c, causes[c]))
	}
	t.Logf("accepted %d of %d (%.1f %%); files refused per cause: %s", accepted, total,
		100*float64(accepted)/float64(total), strings.Join(lines, ", "))
}
