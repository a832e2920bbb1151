package app

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// unsupportedFields are Argo CD Application fields that Ferry knows but does
// not implement yet, keyed by their path with list indexes removed. Refusing
// them with a specific message beats both "unknown field" (they are not
// unknown) and silently ignoring them (the user relies on what they do).
var unsupportedFields = map[string]string{
	"operation":        "starts a sync in Argo CD; with Ferry, remove it and run `ferry app sync NAME`",
	"spec.source.ref":  "a ref offers a source's files to the other entries of spec.sources: a lone source has no one to offer them to; remove it, or move the sources to spec.sources",
	"spec.source.name": "a name labels an entry of spec.sources; remove it, or move the sources to spec.sources",
}

// unsupportedTool lists fields of the Kustomize and Helm sources that Ferry
// does not implement yet; they share one message.
var unsupportedTool = map[string][]string{}

// serverWrittenFields are written by an API server or a controller, not by
// the user: a file saved with `kubectl get -o yaml` carries them. They hold no
// intent, so Parse drops them instead of refusing the file.
var serverWrittenFields = map[string]bool{
	"status":                     true,
	"metadata.uid":               true,
	"metadata.resourceVersion":   true,
	"metadata.generation":        true,
	"metadata.creationTimestamp": true,
	"metadata.managedFields":     true,
	"metadata.selfLink":          true,
}

func unsupportedMessage(schemaPath string) (string, bool) {
	if p, ok := multiSourceField(schemaPath); ok {
		if p == "" {
			return "", false
		}
		schemaPath = p
	}
	if msg, ok := unsupportedFields[schemaPath]; ok {
		return msg, true
	}
	parent, field, _ := cutLast(schemaPath)
	if slices.Contains(unsupportedTool[parent], field) {
		return fmt.Sprintf("not supported yet; remove it, or commit manifests that do not need it (Ferry supports %s)",
			supportedFieldsOf(parent)), true
	}
	return "", false
}

func supportedFieldsOf(parent string) string {
	t := reflect.TypeFor[KustomizeSource]()
	if parent == "spec.source.helm" {
		t = reflect.TypeFor[HelmSource]()
	}
	return strings.Join(slices.Sorted(maps.Keys(jsonFields(t))), ", ")
}

var indexRE = regexp.MustCompile(`\[[^\]]*\]`)

// schema is what the field walk knows of one kind beyond its Go type.
type schema struct {
	// noun names the kind in "unknown field" messages.
	noun string
	// unsupported returns the message for a field Argo CD has and Ferry
	// does not implement, given its path without list indexes.
	unsupported func(schemaPath string) (string, bool)
}

var appSchema = schema{noun: Kind, unsupported: unsupportedMessage}

// check matches a decoded JSON value against the Go type it will be
// decoded into, and reports every unknown or unsupported field and every
// value of the wrong type. It removes each of them from v (a list item
// becomes null), so that what is left decodes and can be validated too. encoding/json would stop at the first problem,
// would not name the path of an unknown field, and matches keys without
// regard to case; Kubernetes does not.
func (s schema) check(v any, t reflect.Type, path string) []FieldError {
	if v == nil {
		return nil // null is the zero value, as in Kubernetes
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[intstr.IntOrString]() {
		switch v.(type) {
		case string, float64, int64, json.Number:
			return nil
		}
		return []FieldError{typeError(path, "a number or a string", v)}
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return []FieldError{typeError(path, "an object", v)}
		}
		fields := jsonFields(t)
		var errs []FieldError
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			p := joinPath(path, key)
			schemaPath := indexRE.ReplaceAllString(p, "")
			if serverWrittenFields[schemaPath] {
				continue
			}
			if msg, ok := s.unsupported(schemaPath); ok {
				errs = append(errs, FieldError{Field: p, Message: msg})
				delete(obj, key)
				continue
			}
			f, ok := fields[key]
			if !ok {
				errs = append(errs, FieldError{Field: p, Message: unknownFieldMessage(key, fields, s.noun)})
				delete(obj, key)
				continue
			}
			sub := s.check(obj[key], f.Type, p)
			if namesField(sub, p) {
				delete(obj, key)
			}
			errs = append(errs, sub...)
		}
		return errs
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return []FieldError{typeError(path, "a list", v)}
		}
		var errs []FieldError
		for i, item := range list {
			p := fmt.Sprintf("%s[%d]", path, i)
			sub := s.check(item, t.Elem(), p)
			if namesField(sub, p) {
				list[i] = nil
			}
			errs = append(errs, sub...)
		}
		return errs
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return []FieldError{typeError(path, "an object", v)}
		}
		if t.Elem().Kind() == reflect.Interface {
			return nil // free-form, such as helm.valuesObject
		}
		var errs []FieldError
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			p := fmt.Sprintf("%s[%q]", path, key)
			sub := s.check(obj[key], t.Elem(), p)
			if namesField(sub, p) {
				delete(obj, key)
			}
			errs = append(errs, sub...)
		}
		return errs
	case reflect.String:
		if _, ok := v.(string); !ok {
			fe := typeError(path, "a string", v)
			fe.Message += "; quote the value"
			return []FieldError{fe}
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return []FieldError{typeError(path, "true or false", v)}
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return []FieldError{typeError(path, "an integer", v)}
		}
		if _, err := n.Int64(); err != nil {
			return []FieldError{typeError(path, "an integer", v)}
		}
	}
	return nil
}

// namesField tells whether one of errs is about the field at path itself
// (its type), not about a field inside it.
func namesField(errs []FieldError, path string) bool {
	for _, fe := range errs {
		if fe.Field == path {
			return true
		}
	}
	return false
}

func typeError(path, want string, got any) FieldError {
	return FieldError{Field: path, Message: fmt.Sprintf("expected %s, got %s", want, describeJSON(got))}
}

func unknownFieldMessage(key string, fields map[string]reflect.StructField, noun string) string {
	best, bestDist := "", 3
	for name := range fields {
		d := editDistance(strings.ToLower(key), strings.ToLower(name))
		if d < bestDist || (d == bestDist && name < best) {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown field: did you mean %q? Fix the spelling (field names are case-sensitive) or remove it", best)
	}
	return fmt.Sprintf("unknown field: Ferry reads Argo CD's %s and does not know this one; remove it or fix its spelling", noun)
}

// jsonFields maps the JSON names of t's fields to the fields, flattening
// embedded structs as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" {
			for n, sub := range jsonFields(f.Type) {
				fields[n] = sub
			}
			continue
		}
		fields[cmp.Or(name, f.Name)] = f
	}
	return fields
}

func joinPath(parent, field string) string {
	if parent == "" {
		return field
	}
	return parent + "." + field
}

func cutLast(path string) (parent, field string, ok bool) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path, false
	}
	return path[:i], path[i+1:], true
}

// editDistance is the Levenshtein distance, for "did you mean" hints.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
