package crds

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/docgen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite deploy/crds")

// TestCRDFilesAreGenerated checks deploy/crds against the types
// (`make docs` rewrites them).
func TestCRDFilesAreGenerated(t *testing.T) {
	docs, err := docgen.Comments("../app", "../appset")
	require.NoError(t, err)
	for _, crd := range Definitions(docs) {
		data, err := YAML(crd)
		require.NoError(t, err)
		docgen.Check(t, filepath.Join("../../deploy/crds", crd.Spec.Names.Plural+".yaml"), data, *update)
	}
}

// TestSchemasAreStructural: the API server refuses a CRD whose schema is
// not structural.
func TestSchemasAreStructural(t *testing.T) {
	for _, crd := range Definitions(nil) {
		s := internalSchema(t, crd)
		st, err := structuralschema.NewStructural(s)
		require.NoError(t, err, crd.Name)
		assert.Empty(t, structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), st), crd.Name)
	}
}

// TestArgoCDFilesPassTheSchemas validates every Application, AppProject
// and ApplicationSet of the shared corpus (real teams' files, Argo CD's
// ApplicationSet examples) as the API server would on kubectl apply: the
// schema refuses none of them. What Ferry does not read is for the worker
// to name, not for the API server to refuse.
func TestArgoCDFilesPassTheSchemas(t *testing.T) {
	type check struct {
		validator  validation.SchemaValidator
		structural *structuralschema.Structural
	}
	checks := map[string]check{}
	for _, crd := range Definitions(nil) {
		s := internalSchema(t, crd)
		v, _, err := validation.NewSchemaValidator(s)
		require.NoError(t, err)
		st, err := structuralschema.NewStructural(s)
		require.NoError(t, err)
		checks[crd.Spec.Names.Kind] = check{v, st}
	}
	seen := map[string]int{}
	for _, root := range []string{"realworld-apps", "argocd-appset-examples", "argocd-example-apps"} {
		dir := filepath.Join("../../../shared/corpus", root)
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("the shared corpus is not here: %v", err)
		}
		require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, doc := range bytes.Split(data, []byte("\n---")) {
				var obj map[string]any
				if yaml.Unmarshal(doc, &obj) != nil || obj["apiVersion"] != Group+"/"+Version {
					continue
				}
				kind, _ := obj["kind"].(string)
				c, ok := checks[kind]
				if !ok {
					continue
				}
				seen[kind]++
				// As the API server does first: a null where the schema
				// does not allow one is dropped.
				defaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
				errs := validation.ValidateCustomResource(nil, obj, c.validator)
				assert.Empty(t, errs, "%s, document %d (%s)", path, i+1, kind)
			}
			return nil
		}))
	}
	t.Logf("validated: %v", seen)
	assert.Greater(t, seen["Application"], 100)
	assert.Greater(t, seen["ApplicationSet"], 20)
	assert.Greater(t, seen["AppProject"], 5)
}

func internalSchema(t *testing.T, crd apiextensionsv1.CustomResourceDefinition) *apiextensions.JSONSchemaProps {
	t.Helper()
	out := &apiextensions.JSONSchemaProps{}
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, out, nil))
	return out
}
