package app

import (
	"maps"
	"strings"
)

// oneSourcePath is where a one-entry spec.sources is read from: Parse reads
// it as spec.source, and errors name the field as the user wrote it.
const oneSourcePath = "spec.sources[0]"

// readSources makes spec.sources what Ferry can read, before the field
// walk: an empty list is no list (Argo CD then reads spec.source), and a
// list of one source is that source, moved to spec.source, as Argo CD
// renders it. A list of several stays for the field walk (its entries are
// checked as spec.source is, with ref and name besides). It reports
// whether spec.source came from spec.sources[0].
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
		if m, ok := list[0].(map[string]any); ok {
			// A name only labels an entry of the list, and a lone source
			// has no one to offer its files to: neither changes what
			// renders.
			m = maps.Clone(m)
			delete(m, "name")
			if m["path"] != nil && m["chart"] == nil {
				delete(m, "ref")
			}
			list[0] = m
		}
		spec["source"] = list[0]
		return true, nil
	}
	return false, nil
}

// multiSourceField maps a field path of an entry of spec.sources (list
// indexes removed) to the spec.source path whose rules it follows; ref and
// name are spec.sources' own.
func multiSourceField(schemaPath string) (string, bool) {
	rest, ok := strings.CutPrefix(schemaPath, "spec.sources.")
	if !ok {
		return "", false
	}
	if rest == "ref" || rest == "name" {
		return "", true
	}
	return "spec.source." + rest, true
}

// renameSourceFields makes errors about spec.source name the field where
// the user wrote it, spec.sources[0].
func renameSourceFields(errs []FieldError) {
	for i, fe := range errs {
		if fe.Field == "spec.source" || strings.HasPrefix(fe.Field, "spec.source.") {
			errs[i].Field = oneSourcePath + strings.TrimPrefix(fe.Field, "spec.source")
		}
	}
}
