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

// manualPage is the user guide's page of the Application's fields.
const manualPage = "../../docs/user-guide/applications.md"

// TestManualFields checks the user guide's list of Application fields
// against the types: every field of a source that Ferry reads, and every
// field it refuses as not supported yet, is named there.
func TestManualFields(t *testing.T) {
	raw, err := os.ReadFile(manualPage)
	require.NoError(t, err)
	page := string(raw)
	start := strings.Index(page, "An Application is Argo CD's")
	require.GreaterOrEqual(t, start, 0, "%s has no paragraph starting \"An Application is Argo CD's\"", manualPage)
	end := strings.Index(page[start:], "\n## ")
	require.Greater(t, end, 0, "%s: the Application fields are followed by a ## heading", manualPage)
	text := page[start : start+end]

	for _, typ := range []reflect.Type{reflect.TypeFor[Source](), reflect.TypeFor[DirectorySource](),
		reflect.TypeFor[KustomizeSource](), reflect.TypeFor[HelmSource]()} {
		for _, name := range slices.Sorted(maps.Keys(jsonFields(typ))) {
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("%s: the Application fields do not name `%s` of %s: add it", manualPage, name, typ.Name())
			}
		}
	}
	for _, path := range slices.Sorted(maps.Keys(unsupportedFields)) {
		if !strings.Contains(text, "`"+path+"`") {
			t.Errorf("%s: the Application fields do not name `%s`, which Ferry refuses: add it to the refused ones", manualPage, path)
		}
	}
	for _, parent := range slices.Sorted(maps.Keys(unsupportedTool)) {
		for _, field := range unsupportedTool[parent] {
			if !strings.Contains(text, "`"+field+"`") {
				t.Errorf("%s: the Application fields do not name `%s`, which Ferry refuses in %s: add it to the refused ones", manualPage, field, parent)
			}
		}
	}
}
