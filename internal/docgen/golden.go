// Package docgen writes and checks the generated pages of docs/reference: a
// test next to the code a page describes builds the page and calls Check,
// which fails when the committed page is stale and rewrites it with -update
// (`make docs` runs them all with -update).
package docgen

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// Fix is what a stale page's error tells the reader to run.
const Fix = "run `make docs` to regenerate docs/reference"

// Check compares the committed file at path with want. With update it
// writes want instead.
func Check(t testing.TB, path string, want []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v: %s", path, err, Fix)
	}
	if !bytes.Equal(got, want) {
		diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(got)), B: difflib.SplitLines(string(want)),
			FromFile: path, ToFile: "generated", Context: 1,
		})
		t.Errorf("%s is stale: %s\n%s", path, Fix, diff)
	}
}

// CheckTree checks that dir holds exactly the files of pages (by base name),
// each as Check does. With update it writes them and removes any other
// file ending in ext.
func CheckTree(t testing.TB, dir, ext string, pages map[string][]byte, update bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ext) || pages[name] != nil {
			continue
		}
		if update {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is not generated any more: %s", filepath.Join(dir, name), Fix)
	}
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		Check(t, filepath.Join(dir, name), pages[name], update)
	}
}
