package app

import (
	"flag"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/docgen"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated pages of docs/reference")

// TestFieldReference checks docs/reference's pages of the Application and
// AppProject fields against the types and the tables of refused fields.
func TestFieldReference(t *testing.T) {
	docs, err := docgen.Comments(".")
	require.NoError(t, err)
	dropped := "Fields an API server or a controller writes (`" + strings.Join(slices.Sorted(maps.Keys(serverWrittenFields)), "`, `") +
		"`) are dropped when a file is read: they hold no intent. Any field not listed is refused as unknown, with the nearest known name."

	appFields := docgen.Fields(reflect.TypeFor[Application](), docs, unsupportedMessage, slices.Sorted(maps.Keys(unsupportedFields)))
	docgen.Check(t, "../../docs/reference/application.md", docgen.FieldPage("Application fields",
		"Every field of an Argo CD `Application` (`"+APIVersion+"`) that Ferry reads, and those it refuses with the reason. "+
			"A field of `spec.source` is read the same way in each entry of `spec.sources`. "+dropped, appFields), *updateDocs)

	projFields := docgen.Fields(reflect.TypeFor[AppProject](), docs, projectSchema.unsupported, slices.Sorted(maps.Keys(projectUnsupported)))
	docgen.Check(t, "../../docs/reference/appproject.md", docgen.FieldPage("AppProject fields",
		"Every field of an Argo CD `AppProject` that Ferry reads, and those it refuses with the reason: a refused field is accepted "+
			"when its value asks for nothing (an empty list). "+dropped, projFields), *updateDocs)
}
