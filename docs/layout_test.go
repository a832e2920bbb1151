package docs

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const layoutPage = "contributing/layout.md"

// TestLayoutNamesEveryPackage checks the contributing guide's layout
// against `go list ./...`: every package of the repository has its row,
// and every row names a package that exists.
func TestLayoutNamesEveryPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err, "go list ./... in the repository's root")
	root, err := os.Getwd()
	require.NoError(t, err)
	root = strings.TrimSuffix(root, string(os.PathSeparator)+"docs")
	var packages []string
	for _, dir := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(dir, root), string(os.PathSeparator))
		packages = append(packages, rel)
	}
	require.NotEmpty(t, packages)

	raw, err := os.ReadFile(layoutPage)
	require.NoError(t, err)
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(string(raw), -1) {
		listed = append(listed, m[1])
	}
	for _, p := range packages {
		if !slices.Contains(listed, p) {
			t.Errorf("%s does not name package %s: add a row `| `%s` | what it holds |`", layoutPage, p, p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(packages, p) {
			t.Errorf("%s names %s, which go list ./... does not list: remove its row", layoutPage, p)
		}
	}
}
