package app

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// PluginSource is Argo CD's spec.source.plugin: the config-management
// plugin that renders the path, the environment it adds (each name
// prefixed with ARGOCD_ENV_, values expanded with the build environment)
// and its parameters.
type PluginSource struct {
	// Name is the plugin's metadata.name, followed by -<spec.version> when
	// the plugin has a version; empty means the plugin whose discover
	// matches the path.
	Name       string            `json:"name,omitempty"`
	Env        []EnvEntry        `json:"env,omitempty"`
	Parameters []PluginParameter `json:"parameters,omitempty"`
}

// EnvEntry is one variable of spec.source.plugin.env.
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PluginParameter is one of spec.source.plugin.parameters: a string, an
// array or a map, as Argo CD encodes it (and hands it to the plugin in
// ARGOCD_APP_PARAMETERS).
type PluginParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Array  []string          `json:"array,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
}

// MarshalJSON keeps an empty array or map that was given ("array": []),
// as Argo CD does: the plugin sees the parameter's type.
func (p PluginParameter) MarshalJSON() ([]byte, error) {
	out := map[string]any{"name": p.Name}
	if p.String != nil {
		out["string"] = *p.String
	}
	if p.Array != nil {
		out["array"] = p.Array
	}
	if p.Map != nil {
		out["map"] = p.Map
	}
	return json.Marshal(out)
}

// UnmarshalJSON keeps an empty array or map non-nil, so that it is told
// from one not given.
func (p *PluginParameter) UnmarshalJSON(b []byte) error {
	type plain PluginParameter
	var raw struct {
		plain
		Array *[]string          `json:"array"`
		Map   *map[string]string `json:"map"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = PluginParameter(raw.plain)
	if raw.Array != nil {
		p.Array = *raw.Array
		if p.Array == nil {
			p.Array = []string{}
		}
	}
	if raw.Map != nil {
		p.Map = *raw.Map
		if p.Map == nil {
			p.Map = map[string]string{}
		}
	}
	return nil
}

// envNameRE is what a variable name may be: a POSIX shell can then read
// it as $ARGOCD_ENV_NAME.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (v *validator) plugin(p *PluginSource) {
	const base = "spec.source.plugin"
	if p.Name != "" && strings.ContainsFunc(p.Name, func(r rune) bool { return r == '/' || r <= ' ' }) {
		v.add(base+".name", "%q is not a plugin name: write the plugin's metadata.name, with -<spec.version> when it has a version, or leave it out to let discover choose", p.Name)
	}
	seen := map[string]bool{}
	for i, e := range p.Env {
		field := fmt.Sprintf("%s.env[%d].name", base, i)
		switch {
		case e.Name == "":
			v.add(field, "required: the variable's name, which the plugin reads as $ARGOCD_ENV_<name>")
		case !envNameRE.MatchString(e.Name):
			v.add(field, "%q is not a variable name: use letters, digits and _, not starting with a digit", e.Name)
		case seen[e.Name]:
			v.add(field, "%q is given twice: keep one", e.Name)
		}
		seen[e.Name] = true
	}
	seen = map[string]bool{}
	for i, param := range p.Parameters {
		field := fmt.Sprintf("%s.parameters[%d]", base, i)
		kinds := 0
		for _, set := range []bool{param.String != nil, param.Array != nil, param.Map != nil} {
			if set {
				kinds++
			}
		}
		switch {
		case param.Name == "":
			v.add(field+".name", "required: the name the plugin reads the parameter by")
		case seen[param.Name]:
			v.add(field+".name", "%q is given twice: keep one", param.Name)
		}
		seen[param.Name] = true
		switch kinds {
		case 0:
			v.add(field, "has no value: give one of string, array or map")
		case 1:
		default:
			v.add(field, "sets more than one of string, array and map: a parameter has one value; keep one")
		}
	}
}
