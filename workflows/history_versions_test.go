package workflows

import (
	"encoding/base64"
	"encoding/json"
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

// TestEveryVersionedChangeHasARecordedHistory: each change that
// workflow.GetVersion gates in this package has a recorded history that
// took its new branch (a Version marker with its change ID and a version
// above DefaultVersion), so that the replay tests check the new code path
// and not only the old one. A new GetVersion without such a history fails
// here: record one (doc.go, "Recorded histories").
func TestEveryVersionedChangeHasARecordedHistory(t *testing.T) {
	changes := versionedChanges(t)
	require.NotEmpty(t, changes)
	recorded := recordedVersions(t)
	var missing []string
	for _, id := range changes {
		if !recorded[id] {
			missing = append(missing, id)
		}
	}
	require.Empty(t, missing, "changes gated by workflow.GetVersion with no recorded history of their new branch: record one with make record-histories")
}

// versionedChanges are the change IDs of every workflow.GetVersion call in
// the package's code: string constants, or literals.
func versionedChanges(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	consts := map[string]string{}
	var idents []ast.Expr
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) {
						if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "GetVersion" && len(n.Args) > 1 {
					if arg, ok := n.Args[1].(*ast.Ident); ok && arg.Name == "change" {
						return true // changeVersion's own, for the changes its callers name
					}
					idents = append(idents, n.Args[1])
				}
				if fn, ok := n.Fun.(*ast.Ident); ok && fn.Name == "changeVersion" && len(n.Args) > 1 {
					idents = append(idents, n.Args[1]) // versions.go
				}
			}
			return true
		})
	}
	var out []string
	for _, e := range idents {
		var id string
		switch e := e.(type) {
		case *ast.Ident:
			id = consts[e.Name]
		case *ast.BasicLit:
			id, _ = strconv.Unquote(e.Value)
		}
		require.NotEmpty(t, id, "a GetVersion change ID at %s is neither a string constant nor a literal", fset.Position(e.Pos()))
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// recordedVersions are the change IDs of the Version markers, with a
// version above DefaultVersion, in the recorded histories.
func recordedVersions(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	type payloads struct {
		Payloads []struct {
			Data string `json:"data"`
		} `json:"payloads"`
	}
	var h struct {
		Events []struct {
			Marker *struct {
				Name    string              `json:"markerName"`
				Details map[string]payloads `json:"details"`
			} `json:"markerRecordedEventAttributes"`
		} `json:"events"`
	}
	decode := func(p payloads, v any) bool {
		if len(p.Payloads) == 0 {
			return false
		}
		data, err := base64.StdEncoding.DecodeString(p.Payloads[0].Data)
		return err == nil && json.Unmarshal(data, v) == nil
	}
	out := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		h.Events = nil
		require.NoError(t, json.Unmarshal(data, &h), f)
		for _, e := range h.Events {
			if e.Marker == nil || e.Marker.Name != "Version" {
				continue
			}
			var id string
			var version int
			if decode(e.Marker.Details["change-id"], &id) && decode(e.Marker.Details["version"], &version) && version > 0 {
				out[id] = true
			}
		}
	}
	return out
}

// TestBaselineChangesAreAskedFor: every change a baseline run has in force
// is one the code asks for, so that the list names no change twice or gone.
func TestBaselineChangesAreAskedFor(t *testing.T) {
	asked := versionedChanges(t)
	for change := range baselineChanges {
		require.Contains(t, asked, change)
	}
	require.NotContains(t, baselineChanges, versionBaseline)
}
