package appset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// unsupportedSpec are spec fields Ferry knows and does not implement yet.
var unsupportedSpec = map[string]string{}

func unsupported(schemaPath string) (string, bool) {
	if msg, ok := unsupportedSpec[schemaPath]; ok {
		return msg, true
	}
	if i := strings.LastIndex(schemaPath, "generators."); i >= 0 {
		if msg, ok := unsupportedSCM[schemaPath[i+len("generators."):]]; ok {
			return msg, true
		}
	}
	return "", false
}

// serverWritten are fields a controller or API server writes: a file saved
// with kubectl get carries them; they hold no intent.
var serverWritten = []string{"status"}

var serverWrittenMeta = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}

// Read parses one ApplicationSet from YAML or JSON and validates it:
// unknown, unsupported (by name) and mistyped fields, the template's
// fields as an Application's, and wrong values, all at once in one
// *app.ValidationError of Kind ApplicationSet.
func Read(data []byte) (*ApplicationSet, error) {
	raw, obj, err := app.ReadObject(data, Kind)
	if err != nil {
		return nil, err
	}
	name := nameOf(obj)
	if kind, _ := obj["kind"].(string); kind != Kind {
		msg := fmt.Sprintf("found %q, not an ApplicationSet: apply Applications with `ferry app apply -f FILE`", kind)
		if kind == "" {
			msg = "required: write kind: ApplicationSet"
		}
		return nil, &app.ValidationError{Kind: Kind, App: name, Errors: []app.FieldError{{Field: "kind", Message: msg}}}
	}
	for _, f := range serverWritten {
		delete(obj, f)
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, f := range serverWrittenMeta {
			delete(md, f)
		}
	}
	errs := app.CheckFields(obj, reflect.TypeFor[ApplicationSet](), "", "ApplicationSet", unsupported)
	errs = append(errs, checkTemplateFields(obj)...)
	var set ApplicationSet
	if cleaned, merr := json.Marshal(obj); merr == nil {
		if uerr := json.Unmarshal(cleaned, &set); uerr != nil {
			return nil, fmt.Errorf("parse ApplicationSet %q: %w", name, uerr)
		}
	}
	_ = raw
	errs = append(errs, validate(&set)...)
	if len(errs) > 0 {
		return &set, &app.ValidationError{Kind: Kind, App: name, Errors: errs}
	}
	return &set, nil
}

// checkTemplateFields checks spec.template, and the generators' template
// overrides, as the Applications they become.
func checkTemplateFields(obj map[string]any) []app.FieldError {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	var errs []app.FieldError
	if t, ok := spec["template"].(map[string]any); ok {
		errs = append(errs, checkTemplate(t, "spec.template")...)
	}
	return errs
}

func checkTemplate(t map[string]any, path string) []app.FieldError {
	s, ok := t["spec"].(map[string]any)
	if !ok {
		return nil
	}
	// A copy: the checker removes what it refuses, and the set keeps it
	// for its own errors.
	var cp map[string]any
	b, _ := json.Marshal(s)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cp); err != nil {
		return nil
	}
	return app.CheckApplicationFields(map[string]any{"spec": cp}, path)
}

func nameOf(obj map[string]any) string {
	if md, ok := obj["metadata"].(map[string]any); ok {
		if name, ok := md["name"].(string); ok {
			return name
		}
	}
	return ""
}
