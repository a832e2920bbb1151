package crds

import (
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// schemaOf is the OpenAPI schema of the JSON that decodes into t, read as
// app.CheckFields reads it: the fields of a struct by their JSON names, a
// map of anything free-form, IntOrString either. Every object keeps the
// fields it does not name (x-kubernetes-preserve-unknown-fields): a field of
// Argo CD's that Ferry does not read reaches the worker, which names it in
// the object's InvalidSpecError condition, instead of the API server
// dropping it without a word. A type inside itself (a matrix generator's
// generators) is an object of any fields.
//
// docs, from docgen.Comments, gives each field the doc comment of its Go
// field as its description (what kubectl explain prints); nil: none.
func schemaOf(t reflect.Type, within map[reflect.Type]bool, docs map[string]string) apiextensionsv1.JSONSchemaProps {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[intstr.IntOrString]() {
		return apiextensionsv1.JSONSchemaProps{XIntOrString: true}
	}
	switch t.Kind() {
	case reflect.Struct:
		if within[t] {
			return freeObject()
		}
		within[t] = true
		defer delete(within, t)
		s := freeObject()
		fields := app.JSONFields(t)
		s.Properties = make(map[string]apiextensionsv1.JSONSchemaProps, len(fields))
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			f := fields[name]
			p := schemaOf(f.Type, within, docs)
			p.Description = strings.Join(strings.Fields(docs[path.Base(t.PkgPath())+"."+t.Name()+"."+f.Name]), " ")
			s.Properties[name] = p
		}
		return s
	case reflect.Slice, reflect.Array:
		items := schemaOf(t.Elem(), within, docs)
		return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return freeObject()
		}
		values := schemaOf(t.Elem(), within, docs)
		return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &values}}
	case reflect.String:
		return apiextensionsv1.JSONSchemaProps{Type: "string"}
	case reflect.Bool:
		return apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return apiextensionsv1.JSONSchemaProps{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return apiextensionsv1.JSONSchemaProps{Type: "number"}
	}
	return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptr(true)} // any value
}

// freeObject is an object whose fields are all kept, whatever they are.
func freeObject() apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}
}

func ptr[T any](v T) *T { return &v }
