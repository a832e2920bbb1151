package render

import (
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/secretmask"
)

// secretValues gathers the secret values a render of src from root can
// meet (see secretScan): those of the checkout and of the remote bases,
// the Helm values of the source, and what the render produced (t, when
// the render got as far as a target).
func (r *Renderer) secretValues(root string, src app.Source, opts Options, t *target) *secretmask.Set {
	limits := r.Limits.withDefaults()
	files := r.files()
	s := &secretScan{set: &secretmask.Set{}, files: files, sops: r.SOPS,
		filesLeft: limits.MaxFiles, bytesLeft: limits.MaxTotalBytes, maxFile: limits.MaxFileBytes}
	if abs, err := filepath.Abs(root); err == nil {
		s.root, _ = files.EvalSymlinks(abs)
	}
	if s.root != "" {
		s.walk(s.root)
	}
	for _, b := range opts.RemoteBases {
		if real, err := files.EvalSymlinks(b.Dir); err == nil {
			root := s.root
			s.root = real
			s.walk(real)
			s.root = root
		}
	}
	if t != nil {
		for _, out := range t.output() {
			s.text(out, t.dir, false)
		}
	}
	var helmVals map[string]any
	if t != nil && t.typ == SourceTypeHelm {
		// What the values files and spec.source.helm give; an error leaves
		// what was read before it.
		helmVals, _ = helmValues(t, src.Helm, newBudget(limits, t.appPath), opts.RefFiles, BuildEnv(src, opts))
	}
	for _, vals := range append(s.chartValues, helmVals) {
		s.helmValues(vals)
	}
	return s.set
}

// kustomization adds what a kustomization generates as Secrets
// (secretGenerator: literals, files, env files) and what its patches of
// Secrets write.
func (s *secretScan) kustomization(m map[string]any, dir string) {
	gens, _ := m["secretGenerator"].([]any)
	for _, g := range gens {
		gen, _ := g.(map[string]any)
		origin := "secretGenerator " + stringAt(gen, "name")
		for _, l := range stringList(gen["literals"]) {
			// A literal without its key is an error that quotes it whole.
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				k, v = "without a key", l
			}
			s.set.Add(strings.Trim(v, `"'`), origin+", literal "+k)
		}
		for _, f := range stringList(gen["files"]) {
			key, path, ok := strings.Cut(f, "=")
			if !ok {
				key, path = filepath.Base(f), f
			}
			if data, ok := s.readIn(dir, path); ok {
				s.set.Add(string(data), origin+", file "+key)
			}
		}
		envs := stringList(gen["envs"])
		if env, ok := gen["env"].(string); ok {
			envs = append(envs, env)
		}
		for _, e := range envs {
			data, ok := s.readIn(dir, e)
			if !ok {
				continue
			}
			// A bad line is an error that quotes it whole.
			for _, line := range strings.Split(string(data), "\n") {
				line = strings.TrimSpace(line)
				if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
					s.set.Add(v, origin+", env "+k)
					s.set.Add(line, origin+", env "+k)
				}
			}
		}
	}
	for _, field := range []string{"patches", "patchesJson6902", "patchesStrategicMerge"} {
		list, _ := m[field].([]any)
		for _, p := range list {
			s.patch(p, dir)
		}
	}
}

// patch adds what a patch writes into a Secret: the Secrets of a
// strategic merge patch (inline or in a file), and every value of a
// patch whose target is a Secret (JSON 6902 operations).
func (s *secretScan) patch(p any, dir string) {
	var text []byte
	var target map[string]any
	switch p := p.(type) {
	case string: // patchesStrategicMerge: a file, or the patch inline
		if strings.Contains(p, "\n") || strings.Contains(p, ":") {
			text = []byte(p)
		} else if data, ok := s.readIn(dir, p); ok {
			text = data
		}
	case map[string]any:
		target, _ = p["target"].(map[string]any)
		if inline, ok := p["patch"].(string); ok {
			text = []byte(inline)
		} else if path, ok := p["path"].(string); ok {
			text, _ = s.readIn(dir, path)
		}
	}
	if len(text) == 0 {
		return
	}
	s.text(text, dir, false)
	if kind, _ := target["kind"].(string); kind != "Secret" {
		return
	}
	origin := "a patch of Secret " + stringAt(target, "name")
	for _, doc := range splitYAML(text) {
		var v any
		if yaml.Unmarshal(doc.data, &v) != nil {
			continue
		}
		switch v := v.(type) {
		case []any: // JSON 6902 operations: what they write
			for _, op := range v {
				if m, ok := op.(map[string]any); ok {
					s.leaves(m["value"], origin+", value at "+stringAt(m, "path"))
				}
			}
		case map[string]any: // a strategic merge patch without its kind
			s.leaves(v["data"], origin+", data")
			s.leaves(v["stringData"], origin+", stringData")
		}
	}
}

// helmValues adds the chart values that Secret templates read, and those
// whose names say they are secret; a subchart's are found under its name.
func (s *secretScan) helmValues(vals map[string]any) {
	if len(vals) == 0 {
		return
	}
	for _, path := range s.valuePaths {
		origin := "Helm value " + strings.Join(path, ".")
		s.leaves(lookup(vals, path), origin)
		for _, sub := range vals {
			if m, ok := sub.(map[string]any); ok {
				s.leaves(lookup(m, path), origin)
			}
		}
	}
	s.namedSecret(vals, "")
}

// namedSecret adds the string values under a key that says it is secret.
func (s *secretScan) namedSecret(v any, path string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := strings.TrimPrefix(path+"."+k, ".")
			if secretName.MatchString(k) {
				s.leaves(e, "Helm value "+p)
				continue
			}
			s.namedSecret(e, p)
		}
	case []any:
		for _, e := range v {
			s.namedSecret(e, path)
		}
	}
}

func lookup(m map[string]any, path []string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
