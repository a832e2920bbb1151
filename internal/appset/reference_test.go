package appset

import (
	"flag"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/docgen"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated pages of docs/reference")

// TestFieldReference checks docs/reference's page of the ApplicationSet
// fields against the types and the tables of refused fields.
func TestFieldReference(t *testing.T) {
	docs, err := docgen.Comments(".", "../app")
	require.NoError(t, err)
	extra := slices.Sorted(maps.Keys(unsupportedSpec))
	for _, g := range slices.Sorted(maps.Keys(unsupportedSCM)) {
		extra = append(extra, "spec.generators."+g)
	}
	fields := docgen.Fields(reflect.TypeFor[ApplicationSet](), docs, unsupported, extra)
	docgen.Check(t, "../../docs/reference/applicationset.md", docgen.FieldPage("ApplicationSet fields",
		"Every field of an Argo CD `ApplicationSet` that Ferry reads, and those it refuses with the reason. "+
			"`spec.template` is checked as the Applications it generates are (docs/reference/application.md) before any is generated. "+
			"`status` and the metadata an API server writes are dropped when a file is read. Any field not listed is refused as unknown.",
		fields), *updateDocs)
}
