package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// helmValues merges the values spec.source.helm gives, in Argo CD's order
// (each later one wins, maps merged key by key): the value files in order
// (relative to the chart; they may use ".." but must stay inside the
// repository, symlinks included), then valuesObject or, when it is not
// set, values, then parameters as helm template's --set (and, for
// forceString, --set-string, which helm applies after every --set), then
// fileParameters (--set-file, helm_files.go). The
// chart's own values.yaml comes under all of them when Helm coalesces.
//
// A value file encrypted with SOPS is decrypted (sops.go); one named as
// helm-secrets users name them, secrets://path, must be.
//
// A value file of another source ($ref/path) comes from refFiles, which the
// worker read from that source's checkout (ReadRefFiles), and so does a
// value file given as a URL, which the worker fetched under its host
// policy (manifests.Loader.ValueFiles): the render itself reaches no
// network.
//
// As in Argo CD, the build environment env (BuildEnv) is substituted
// (Envsubst) into the parameters' values and the paths of value files and
// file parameters, never into values or valuesObject nor into a name.
func helmValues(t *target, h *app.HelmSource, b *budget, refFiles map[string]string, env map[string]string) (map[string]any, error) {
	vals := map[string]any{}
	if h == nil {
		return vals, nil
	}
	for i, vf := range h.ValueFiles {
		what := fmt.Sprintf("spec.source.helm.valueFiles[%d]", i)
		vf, named := app.SecretsValueFile(vf)
		if _, _, ok := app.RefValueFile(vf); ok || app.ValueFileURL(vf) {
			data, found := refFiles[vf]
			if !found && h.IgnoreMissingValueFiles {
				continue
			}
			if !found {
				return nil, &SourceError{Path: t.appPath, Msg: fmt.Sprintf("%s %q: %v", what, vf, errNotInRepo), Err: errNotInRepo}
			}
			if err := b.take(vf, int64(len(data))); err != nil {
				return nil, err
			}
			plain, err := decryptValueFile(t.sops, vf, []byte(data), named)
			if err != nil {
				return nil, err
			}
			m, err := readValues(vf, plain)
			if err != nil {
				return nil, err
			}
			vals = mergeValues(vals, m)
			continue
		}
		real, display, err := resolveInRepo(t.root, t.dir, Envsubst(vf, env), what)
		if errors.Is(err, errNotInRepo) && h.IgnoreMissingValueFiles {
			continue
		}
		if err != nil {
			return nil, err
		}
		data, err := b.readFile(real, display)
		if err != nil {
			return nil, err
		}
		if data, err = decryptValueFile(t.sops, display, data, named); err != nil {
			return nil, err
		}
		m, err := readValues(display, data)
		if err != nil {
			return nil, err
		}
		vals = mergeValues(vals, m)
	}

	switch {
	case h.ValuesObject != nil:
		j, err := json.Marshal(h.ValuesObject)
		if err != nil {
			return nil, &SourceError{Path: t.appPath, Msg: "spec.source.helm.valuesObject: " + err.Error()}
		}
		m, err := readValues("spec.source.helm.valuesObject", j)
		if err != nil {
			return nil, err
		}
		vals = mergeValues(vals, m)
	case strings.TrimSpace(h.Values) != "":
		m, err := readValues("spec.source.helm.values", []byte(h.Values))
		if err != nil {
			return nil, err
		}
		vals = mergeValues(vals, m)
	}

	for _, forced := range []bool{false, true} {
		for i, p := range h.Parameters {
			if p.ForceString != forced {
				continue
			}
			set := p.Name + "=" + escapeSetValue(Envsubst(p.Value, env))
			parse := strvals.ParseInto
			if forced {
				parse = strvals.ParseIntoString
			}
			if err := parse(set, vals); err != nil {
				return nil, &SourceError{Path: t.appPath, Msg: fmt.Sprintf("spec.source.helm.parameters[%d] %q: %v", i, p.Name, err)}
			}
		}
	}
	if err := helmFileParameters(t, h, b, vals, env); err != nil {
		return nil, err
	}
	return vals, nil
}

// readValues parses a YAML values document as Helm does, naming the file
// and line when it does not parse.
func readValues(name string, data []byte) (map[string]any, error) {
	if _, err := yaml.YAMLToJSON(data); err != nil {
		return nil, yamlError(name, yamlDoc{index: 1, line: 1}, err)
	}
	vals, err := chartutil.ReadValues(data)
	if err != nil {
		return nil, &ParseError{File: name, Line: 1, Msg: err.Error(), Err: err}
	}
	return vals, nil
}

// mergeValues merges src into dst, src winning, maps merged recursively,
// as helm merges its --values files.
func mergeValues(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(have, sub)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// escapeSetValue makes a parameter's value one value for --set, as Argo
// CD passes it: commas are literal (helm would split the value at them)
// unless the value is a {a,b} list.
func escapeSetValue(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var sb strings.Builder
	escaped := false
	for _, c := range v {
		if c == ',' && !escaped {
			sb.WriteByte('\\')
		}
		escaped = c == '\\' && !escaped
		sb.WriteRune(c)
	}
	return sb.String()
}
