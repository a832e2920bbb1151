package appset

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// listParams are the parameter sets of a list generator: each element as
// it is for goTemplate; for the fasttemplate form its string values, and
// those of its values object as values.<key>.
func (r renderer) listParams(g *ListGenerator, path string) ([]Params, error) {
	elements := g.Elements
	if g.ElementsYaml != "" {
		if err := yaml.Unmarshal([]byte(g.ElementsYaml), &elements); err != nil {
			return nil, fmt.Errorf("%s.list.elementsYaml: not a YAML list of objects: %w", path, err)
		}
	}
	var out []Params
	for i, e := range elements {
		if r.goTemplate {
			out = append(out, maps.Clone(e))
			continue
		}
		p := Params{}
		for _, k := range slices.Sorted(maps.Keys(e)) {
			if k == "values" {
				values, ok := e[k].(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s.list.elements[%d].values: expected an object of strings", path, i)
				}
				for vk, vv := range values {
					s, ok := vv.(string)
					if !ok {
						return nil, fmt.Errorf("%s.list.elements[%d].values.%s: expected a string (the fasttemplate form takes strings only; quote it, or set goTemplate: true)", path, i, vk)
					}
					p["values."+vk] = s
				}
				continue
			}
			s, ok := e[k].(string)
			if !ok {
				return nil, fmt.Errorf("%s.list.elements[%d].%s: expected a string (the fasttemplate form takes strings only; quote it, or set goTemplate: true)", path, i, k)
			}
			p[k] = s
		}
		out = append(out, p)
	}
	return out, nil
}

// objectParams is an object as one parameter set: as it is for
// goTemplate, flattened to dotted keys with string values for the
// fasttemplate form (a git file's item, a plugin's answer).
func (r renderer) objectParams(obj map[string]any) Params {
	ps := Params{}
	if r.goTemplate {
		maps.Copy(ps, obj)
		return ps
	}
	for k, v := range Flatten(obj) {
		ps[k] = v
	}
	return ps
}

// withValues renders a generator's values with its parameters and adds
// them: as values (goTemplate) or values.<key>.
func (r renderer) withValues(p Params, values map[string]string) (Params, error) {
	if len(values) == 0 {
		return p, nil
	}
	rendered := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v, err := r.renderString(values[k], p)
		if err != nil {
			return nil, fmt.Errorf("values.%s: %w", k, err)
		}
		rendered[k] = v
	}
	if r.goTemplate {
		p["values"] = rendered
		return p, nil
	}
	for k, v := range rendered {
		p["values."+k] = v
	}
	return p, nil
}

// pathParams are the parameters of a directory or file path: the path
// itself, its basename, the basename as a DNS name, its segments and, for
// a file, its file name.
func (r renderer) pathParams(p Params, dir, file, prefix string) {
	base := path.Base(dir)
	if r.goTemplate {
		pp := map[string]any{
			"path": dir, "basename": base, "basenameNormalized": SanitizeName(base),
			"segments": strings.Split(dir, "/"),
		}
		if file != "" {
			pp["filename"], pp["filenameNormalized"] = file, SanitizeName(file)
		}
		if prefix != "" {
			p[prefix] = map[string]any{"path": pp}
		} else {
			p["path"] = pp
		}
		return
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	p[name] = dir
	p[name+".basename"] = base
	p[name+".basenameNormalized"] = SanitizeName(base)
	if file != "" {
		p[name+".filename"], p[name+".filenameNormalized"] = file, SanitizeName(file)
	}
	for i, seg := range strings.Split(dir, "/") {
		if seg != "" {
			p[name+"["+strconv.Itoa(i)+"]"] = seg
		}
	}
}

var invalidDNSChars = regexp.MustCompile(`[^-a-z0-9.]`)

// SanitizeName makes a name a DNS subdomain, as Argo CD's
// basenameNormalized: lower case, other characters as '-'.
func SanitizeName(name string) string {
	name = invalidDNSChars.ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// Flatten turns nested parameters into dotted keys with string values, as
// Argo CD matches selectors and fills the fasttemplate form: lists as
// key.0, key.1.
func Flatten(p Params) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				walk(joinKey(prefix, k), x)
			}
		case []any:
			for i, x := range t {
				walk(joinKey(prefix, strconv.Itoa(i)), x)
			}
		case []string:
			for i, x := range t {
				out[joinKey(prefix, strconv.Itoa(i))] = x
			}
		case nil:
			out[prefix] = ""
		default:
			out[prefix] = fmt.Sprint(t)
		}
	}
	for k, v := range p {
		walk(k, v)
	}
	return out
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// Matches reports whether labels satisfy the selector; nil matches all.
func (sel *LabelSelector) Matches(labels map[string]string) bool {
	if sel == nil {
		return true
	}
	for k, v := range sel.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range sel.MatchExpressions {
		v, ok := labels[r.Key]
		switch r.Operator {
		case "In":
			if !ok || !contains(r.Values, v) {
				return false
			}
		case "NotIn":
			if ok && contains(r.Values, v) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		}
	}
	return true
}
