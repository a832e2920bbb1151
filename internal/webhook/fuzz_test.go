package webhook

import (
	"path/filepath"
	"strings"
	"testing"
)

// The fuzz targets feed each provider's parser arbitrary bytes, seeded with
// the fixtures in testdata/ (and testdata/fuzz/ once go test -fuzz has
// found something): a parser may refuse a payload, never panic, and what it
// accepts must be a usable push.
func FuzzParseGitHub(f *testing.F)    { fuzzParse(f, GitHub) }
func FuzzParseGitLab(f *testing.F)    { fuzzParse(f, GitLab) }
func FuzzParseBitbucket(f *testing.F) { fuzzParse(f, Bitbucket) }
func FuzzParseGitea(f *testing.F)     { fuzzParse(f, Gitea) }

func fuzzParse(f *testing.F, p Provider) {
	for _, name := range fixtureNames(f, string(p)) {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		pushes, err := providers[p].parse(payload)
		if err != nil {
			return
		}
		for _, push := range pushes {
			if !strings.HasPrefix(push.Ref, "refs/") || len(push.RepoURLs) == 0 || len(push.Paths) > maxPaths {
				t.Fatalf("accepted an unusable push %+v", push)
			}
			_ = push.RepoKeys()
			_ = dedupeKey(push)
		}
	})
}

func fixtureNames(t testing.TB, prefix string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("testdata", prefix+"-*.json"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no fixtures testdata/%s-*.json: %v", prefix, err)
	}
	for i, m := range matches {
		matches[i] = filepath.Base(m)
	}
	return matches
}
