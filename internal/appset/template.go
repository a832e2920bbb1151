package appset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Params is one parameter set of a generator: flat string values for the
// fasttemplate form, nested values for goTemplate.
type Params = map[string]any

// renderer renders strings with a set's template form.
type renderer struct {
	goTemplate bool
	options    []string
}

func (s *ApplicationSet) renderer() renderer {
	return renderer{goTemplate: s.Spec.GoTemplate, options: s.Spec.GoTemplateOptions}
}

// sprigFuncs are Sprig's functions less those that read the environment or
// the network, as Argo CD removes them, and Argo CD's own (argoFuncs).
var sprigFuncs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(f, name)
	}
	maps.Copy(f, argoFuncs)
	return f
}()

var fastTag = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// renderString renders one string. The fasttemplate form replaces each
// {{ name }} with the parameter's value and leaves unknown names as they
// are, as Argo CD does; goTemplate runs text/template with Sprig.
func (r renderer) renderString(s string, params Params) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if !r.goTemplate {
		return fastTag.ReplaceAllStringFunc(s, func(tag string) string {
			key := strings.TrimSpace(tag[2 : len(tag)-2])
			if v, ok := params[key]; ok {
				return fmt.Sprint(v)
			}
			return tag
		}), nil
	}
	t, err := template.New("").Option(r.options...).Funcs(sprigFuncs).Parse(s)
	if err != nil {
		return "", fmt.Errorf("parse the Go template %q: %w", s, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, params); err != nil {
		return "", fmt.Errorf("render the Go template %q: %w", s, err)
	}
	return b.String(), nil
}

// renderTree renders every string of a decoded JSON tree in place of it,
// and in the fasttemplate form the keys of objects too, as Argo CD renders
// the template's JSON as one string there.
func (r renderer) renderTree(v any, params Params, skip func(path string) bool, path string) (any, error) {
	switch t := v.(type) {
	case string:
		return r.renderString(t, params)
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			x, err := r.renderTree(item, params, skip, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			p := path + "." + k
			if skip != nil && skip(p) {
				out[k] = t[k]
				continue
			}
			key := k
			if !r.goTemplate {
				key, _ = r.renderString(k, params)
			}
			x, err := r.renderTree(t[k], params, skip, p)
			if err != nil {
				return nil, err
			}
			out[key] = x
		}
		return out, nil
	}
	return v, nil
}

// toTree turns a value into its decoded JSON.
func toTree(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// renderApp renders the template with one parameter set into an
// Application, patched by spec.templatePatch, read as strictly as a file
// of `ferry app apply` and validated.
func (s *ApplicationSet) renderApp(tmpl Template, params Params, opts app.ValidateOptions) (*app.Application, error) {
	r := s.renderer()
	tree, err := toTree(tmpl)
	if err != nil {
		return nil, err
	}
	rendered, err := r.renderTree(tree, params, nil, "")
	if err != nil {
		return nil, err
	}
	obj := rendered.(map[string]any)
	s.addResourcesFinalizer(obj)
	if s.Spec.TemplatePatch != "" {
		patch, err := r.renderString(s.Spec.TemplatePatch, params)
		if err != nil {
			return nil, fmt.Errorf("spec.templatePatch: %w", err)
		}
		var p map[string]any
		if err := yaml.Unmarshal([]byte(patch), &p); err != nil {
			return nil, fmt.Errorf("spec.templatePatch: the rendered patch is not a YAML object: %w", err)
		}
		obj = mergePatch(obj, p)
	}
	obj["apiVersion"], obj["kind"] = app.APIVersion, app.Kind
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return app.Read(raw, opts)
}

// addResourcesFinalizer gives a generated app whose template names no
// finalizer Argo CD's resources finalizer, unless the set preserves
// resources on deletion, as Argo CD's ApplicationSet controller does
// (RenderTemplateParams): deleting the app then deletes its resources, and
// users and tools read it to know so. A templatePatch comes after.
func (s *ApplicationSet) addResourcesFinalizer(obj map[string]any) {
	if s.PreserveResources() {
		return
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	if fs, _ := md["finalizers"].([]any); len(fs) > 0 {
		return
	}
	md["finalizers"] = []any{app.ResourcesFinalizer}
}

// mergePatch applies a JSON merge patch (RFC 7386): objects merge, null
// deletes, anything else replaces.
func mergePatch(dst, patch map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(dst, k)
			continue
		}
		pm, pIsMap := pv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if pIsMap && dIsMap {
			dst[k] = mergePatch(dm, pm)
		} else {
			dst[k] = pv
		}
	}
	return dst
}

// fillTemplate fills the zero fields of a generator's template override
// from spec.template (Argo CD's mergo.Merge): the override wins.
func fillTemplate(override *Template, base Template) (Template, error) {
	if override == nil {
		return base, nil
	}
	o, err := toTree(override)
	if err != nil {
		return Template{}, err
	}
	b, err := toTree(base)
	if err != nil {
		return Template{}, err
	}
	var out Template
	merged, _ := json.Marshal(fillZero(o, b))
	return out, json.Unmarshal(merged, &out)
}

func fillZero(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		dv, ok := dst[k]
		switch {
		case !ok || isZero(dv):
			dst[k] = sv
		default:
			dm, dIsMap := dv.(map[string]any)
			sm, sIsMap := sv.(map[string]any)
			if dIsMap && sIsMap {
				dst[k] = fillZero(dm, sm)
			}
		}
	}
	return dst
}

func isZero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}
