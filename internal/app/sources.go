package app

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
)

// oneSourcePath is where a one-entry spec.sources is read from: Parse reads
// it as spec.source, and errors name the field as the user wrote it.
const oneSourcePath = "spec.sources[0]"

// readSources makes spec.sources what Ferry can read, before the field
// walk: an empty list is no list (Argo CD then reads spec.source), and a
// list of one source is that source, moved to spec.source, as Argo CD
// renders it. Several sources are refused, as multi-source rendering is not
// supported yet (issue 17); each entry's own fields are still checked so
// that the refusal names all of the file's problems. It reports whether
// spec.source came from spec.sources[0].
func readSources(obj map[string]any) (moved bool, errs []FieldError) {
	spec, _ := obj["spec"].(map[string]any)
	raw, ok := spec["sources"]
	if !ok || raw == nil {
		return false, nil
	}
	list, ok := raw.([]any)
	if !ok {
		delete(spec, "sources")
		return false, []FieldError{typeError("spec.sources", "a list of sources", raw)}
	}
	switch {
	case len(list) == 0:
		delete(spec, "sources")
		return false, nil
	case spec["source"] != nil:
		delete(spec, "sources")
		return false, []FieldError{{Field: "spec.sources", Message: "set either spec.source or spec.sources, not both: Argo CD would ignore spec.source; keep one"}}
	case len(list) == 1:
		delete(spec, "sources")
		spec["source"] = list[0]
		return true, nil
	}
	delete(spec, "sources")
	errs = append(errs, FieldError{Field: "spec.sources", Message: fmt.Sprintf(
		"%d sources: multi-source Applications are not supported yet (issue 17); with one source, write it as spec.source", len(list))})
	for i, entry := range list {
		m, ok := entry.(map[string]any)
		if !ok {
			errs = append(errs, typeError(fmt.Sprintf("spec.sources[%d]", i), "an object", entry))
			continue
		}
		// ref and name belong to multi-source; the rest is checked as any
		// source is.
		m = maps.Clone(m)
		delete(m, "ref")
		delete(m, "name")
		errs = append(errs, multiSourceSchema.check(m, reflect.TypeFor[Source](), fmt.Sprintf("spec.sources[%d]", i))...)
	}
	return false, errs
}

var multiSourceSchema = schema{noun: Kind, unsupported: func(schemaPath string) (string, bool) {
	return unsupportedMessage(strings.Replace(schemaPath, "spec.sources", "spec.source", 1))
}}

// renameSourceFields makes errors about spec.source name the field where
// the user wrote it, spec.sources[0].
func renameSourceFields(errs []FieldError) {
	for i, fe := range errs {
		if fe.Field == "spec.source" || strings.HasPrefix(fe.Field, "spec.source.") {
			errs[i].Field = oneSourcePath + strings.TrimPrefix(fe.Field, "spec.source")
		}
	}
}
