package app

import (
	"errors"
	"reflect"
)

// ErrNotOneObject is wrapped by ReadObject's error when the input holds no
// document, or several.
var ErrNotOneObject = errors.New("expected exactly one object")

// ReadObject reads exactly one JSON or YAML object, as Parse does: syntax
// errors name their line, and numbers stay json.Number so that CheckFields
// tells 1 from 1.5. noun names the kind in messages. It returns the object
// as JSON and decoded. Other kinds that Ferry reads (ApplicationSet) use it
// so that their files read as an Application's do.
func ReadObject(data []byte, noun string) ([]byte, map[string]any, error) {
	return readOneObject(data, docKind{noun: noun, errNotOne: ErrNotOneObject})
}

// CheckFields matches a decoded object against the Go type t it will be
// decoded into and reports every unknown field, every field unsupported
// names (given its path without list indexes; nil: none) and every value
// of the wrong type, with its path under prefix. It removes each from v so
// that the rest decodes. noun names the kind in "unknown field" messages.
func CheckFields(v any, t reflect.Type, prefix, noun string, unsupported func(schemaPath string) (string, bool)) []FieldError {
	if unsupported == nil {
		unsupported = func(string) (string, bool) { return "", false }
	}
	return schema{noun: noun, unsupported: unsupported}.check(v, t, prefix)
}

// CheckApplicationFields is CheckFields with the Application's own schema:
// the template of an ApplicationSet is checked as the Applications it
// generates will be, before any is generated.
func CheckApplicationFields(v any, prefix string) []FieldError {
	errs := appSchema.check(v, reflect.TypeFor[Application](), "")
	for i := range errs {
		errs[i].Field = joinPath(prefix, errs[i].Field)
	}
	return errs
}

// JSONFields maps the JSON names of struct type t's fields to the fields,
// flattening embedded structs as encoding/json does: the fields CheckFields
// knows, for whatever else describes a kind from its Go type (its CRD).
func JSONFields(t reflect.Type) map[string]reflect.StructField {
	return jsonFields(t)
}
