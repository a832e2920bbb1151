package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// workflowImports are all that the workflow code may import: the SDK's
// deterministic packages, Ferry's contract and its pure domain packages,
// and standard packages that do no I/O. A workflow that needs more does
// it in an activity.
var workflowImports = []string{
	"bytes", "cmp", "encoding/json", "errors", "fmt", "hash/fnv", "maps", "path", "reflect",
	"slices", "sort", "strconv", "strings", "time", "unicode",
	"go.temporal.io/api/enums/v1", "go.temporal.io/sdk/temporal", "go.temporal.io/sdk/workflow",
	"go.temporal.io/sdk/client", // for the type client.MetricsHandler alone (checked below)
	"github.com/ferry-gitops/ferry/contract",
	"github.com/ferry-gitops/ferry/internal/app", "github.com/ferry-gitops/ferry/internal/appset",
	"github.com/ferry-gitops/ferry/internal/notify", "github.com/ferry-gitops/ferry/internal/regions",
}

// badImports lists what a set of Go files imports beyond allowed; of the
// SDK's client package they may name the MetricsHandler type only.
func badImports(t *testing.T, fset *token.FileSet, files map[string]*ast.File, allowed []string) []string {
	var bad []string
	for name, f := range files {
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if !slices.Contains(allowed, path) {
				bad = append(bad, name+" imports "+path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "client" && id.Obj == nil && sel.Sel.Name != "MetricsHandler" {
					bad = append(bad, name+" uses client."+sel.Sel.Name+" (only the MetricsHandler type is allowed)")
				}
			}
			return true
		})
	}
	slices.Sort(bad)
	return bad
}

func parseDir(t *testing.T, fset *token.FileSet, dir string) map[string]*ast.File {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		require.NoError(t, err)
		files[p] = f
	}
	return files
}

// TestWorkflowsImportNoIO: the workflow code replays, so it may not reach
// the network, the disk or the clock except through the SDK.
func TestWorkflowsImportNoIO(t *testing.T) {
	fset := token.NewFileSet()
	require.Empty(t, badImports(t, fset, parseDir(t, fset, "."), workflowImports),
		"workflows/ imports what may do I/O: move that work into an activity (activities/), or the type into contract/")

	// The check fails on a workflow file that opens a file.
	f, err := parser.ParseFile(fset, "opens.go", "package workflows\nimport \"os\"\nfunc read() { os.ReadFile(\"x\") }\n", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"opens.go imports os"}, badImports(t, fset, map[string]*ast.File{"opens.go": f}, workflowImports))
	f, err = parser.ParseFile(fset, "dials.go", "package workflows\nimport \"go.temporal.io/sdk/client\"\nvar _, _ = client.Dial(client.Options{})\n", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"dials.go uses client.Dial (only the MetricsHandler type is allowed)", "dials.go uses client.Options (only the MetricsHandler type is allowed)"},
		badImports(t, fset, map[string]*ast.File{"dials.go": f}, workflowImports))
}

// TestInternalImportsNoTemporal: the domain is free of Temporal, so that it
// is tested alone. internal/devenv alone, which runs the Temporal server of
// the local stack, talks to the server's API (never the SDK).
func TestInternalImportsNoTemporal(t *testing.T) {
	var bad []string
	err := filepath.WalkDir("../internal", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			devenvAPI := strings.HasPrefix(filepath.ToSlash(path), "../internal/devenv/") && strings.HasPrefix(p, "go.temporal.io/api/")
			if strings.HasPrefix(p, "go.temporal.io/") && !devenvAPI {
				bad = append(bad, path+" imports "+p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, bad, "internal/ imports Temporal: keep Temporal in workflows/, activities/, contract/ and ferryclient/")
}
