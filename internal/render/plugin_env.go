package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// pluginBaseEnv are the only variables of the renderer's own environment
// a plugin gets: inside a sandbox they are the sandbox's (PATH, HOME=/tmp,
// TMPDIR=/tmp), never the worker's.
var pluginBaseEnv = []string{"PATH", "HOME", "TMPDIR"}

// pluginEnv is the environment of a plugin's commands, as Argo CD gives
// it to a sidecar plugin: the build environment, KUBE_VERSION and
// KUBE_API_VERSIONS, spec.source.plugin.env as ARGOCD_ENV_<name> (values
// expanded with the build environment), and the parameters as
// ARGOCD_APP_PARAMETERS (JSON) and PARAM_<NAME>, PARAM_<NAME>_<i> for an
// array, PARAM_<NAME>_<KEY> for a map.
func (r *Renderer) pluginEnv(src app.Source, opts Options) ([]string, error) {
	var env []string
	for _, name := range pluginBaseEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	build := BuildEnv(src, opts)
	for _, k := range slices.Sorted(maps.Keys(build)) {
		env = append(env, k+"="+build[k])
	}
	caps := r.Capabilities.normalized()
	kv := caps.KubeVersion
	if !strings.HasPrefix(kv, "v") {
		kv = "v" + kv
	}
	apis := sortedUnique(append(slices.Clone(builtinAPIVersions()), caps.APIVersions...))
	env = append(env, "KUBE_VERSION="+kv, "KUBE_API_VERSIONS="+strings.Join(apis, ","))
	p := src.Plugin
	if p == nil {
		return env, nil
	}
	for _, e := range p.Env {
		env = append(env, "ARGOCD_ENV_"+e.Name+"="+Envsubst(e.Value, build))
	}
	params := p.Parameters
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode spec.source.plugin.parameters: %w", err)
	}
	env = append(env, "ARGOCD_APP_PARAMETERS="+string(raw))
	for _, param := range params {
		base := "PARAM_" + paramEnvName(param.Name)
		if param.String != nil {
			env = append(env, base+"="+*param.String)
		}
		for _, k := range slices.Sorted(maps.Keys(param.Map)) {
			env = append(env, base+"_"+paramEnvName(k)+"="+param.Map[k])
		}
		for i, v := range param.Array {
			env = append(env, fmt.Sprintf("%s_%d=%s", base, i, v))
		}
	}
	return env, nil
}

var paramEnvInvalid = regexp.MustCompile(`[^A-Z0-9_]`)

// paramEnvName is Argo CD's escaping of a parameter name (or map key) in
// PARAM_ variables: upper case, anything but letters, digits and _ made _.
func paramEnvName(name string) string {
	return paramEnvInvalid.ReplaceAllString(strings.ToUpper(name), "_")
}
