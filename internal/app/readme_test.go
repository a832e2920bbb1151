package app

import (
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEFields checks the README's list of Application fields against
// the types: every field of a source that Ferry reads, and every field it
// refuses as not supported yet, is named there.
func TestREADMEFields(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(raw)
	start := strings.Index(readme, "An Application is Argo CD's")
	require.GreaterOrEqual(t, start, 0, "README.md has no paragraph starting \"An Application is Argo CD's\"")
	end := strings.Index(readme[start:], "\n`ferry app diff`")
	require.Greater(t, end, 0, "README.md: the Application fields are followed by the `ferry app diff` paragraph")
	text := readme[start : start+end]

	for _, typ := range []reflect.Type{reflect.TypeFor[Source](), reflect.TypeFor[DirectorySource](),
		reflect.TypeFor[KustomizeSource](), reflect.TypeFor[HelmSource]()} {
		for _, name := range slices.Sorted(maps.Keys(jsonFields(typ))) {
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("README.md's Application fields do not name `%s` of %s: add it", name, typ.Name())
			}
		}
	}
	for _, path := range slices.Sorted(maps.Keys(unsupportedFields)) {
		if !strings.Contains(text, "`"+path+"`") {
			t.Errorf("README.md's Application fields do not name `%s`, which Ferry refuses: add it to the refused ones", path)
		}
	}
	for _, parent := range slices.Sorted(maps.Keys(unsupportedTool)) {
		for _, field := range unsupportedTool[parent] {
			if !strings.Contains(text, "`"+field+"`") {
				t.Errorf("README.md's Application fields do not name `%s`, which Ferry refuses in %s: add it to the refused ones", field, parent)
			}
		}
	}
}
