package appset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// matrix yields the product of its two generators: the second is rendered
// with each parameter set of the first (so a git path may name a list
// element's value), and each pair is combined.
func (g *generation) matrix(ctx context.Context, m *MatrixGenerator, p string) ([]Params, error) {
	first, err := g.run(ctx, m.Generators[0], p+".matrix.generators[0]", nil)
	if err != nil {
		return nil, err
	}
	var out []Params
	for _, a := range first {
		second, err := g.interpolate(m.Generators[1], a)
		if err != nil {
			return nil, fmt.Errorf("%s.matrix.generators[1]: %w", p, err)
		}
		bs, err := g.run(ctx, second, p+".matrix.generators[1]", nil)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			combined, err := g.combine(a, b)
			if err != nil {
				return nil, fmt.Errorf("%s.matrix: %w", p, err)
			}
			out = append(out, combined)
		}
	}
	return out, nil
}

// interpolate renders a generator's strings with params, leaving its
// template override for the final render.
func (g *generation) interpolate(gen Generator, params Params) (Generator, error) {
	tree, err := toTree(gen)
	if err != nil {
		return gen, err
	}
	skip := func(path string) bool { return strings.HasSuffix(path, ".template") }
	rendered, err := g.r.renderTree(tree, params, skip, "")
	if err != nil {
		return gen, err
	}
	b, err := json.Marshal(rendered)
	if err != nil {
		return gen, err
	}
	var out Generator
	return out, json.Unmarshal(b, &out)
}

// combine joins a pair of a matrix: goTemplate merges b under a; the
// fasttemplate form refuses a key with two values, as Argo CD does.
func (g *generation) combine(a, b Params) (Params, error) {
	if g.r.goTemplate {
		out := deepCopy(b)
		return deepMerge(out, deepCopy(a)), nil
	}
	out := maps.Clone(a)
	for k, v := range b {
		if av, ok := a[k]; ok && fmt.Sprint(av) != fmt.Sprint(v) {
			return nil, fmt.Errorf("found duplicate key %s with different value, a: %v, b: %v: rename one of them", k, av, v)
		}
		out[k] = v
	}
	return out, nil
}

// merge yields the base (first) generator's parameter sets, each
// overridden by the sets of the other generators whose mergeKeys match.
func (g *generation) merge(ctx context.Context, m *MergeGenerator, p string) ([]Params, error) {
	base, err := g.run(ctx, m.Generators[0], p+".merge.generators[0]", nil)
	if err != nil {
		return nil, err
	}
	baseKeys := make([]string, len(base))
	seen := map[string]bool{}
	for i, ps := range base {
		k := mergeKey(m.MergeKeys, ps)
		if seen[k] {
			return nil, fmt.Errorf("%s.merge: the first generator yields two parameter sets with merge key %s: merge keys must be unique", p, k)
		}
		seen[k], baseKeys[i] = true, k
	}
	for i := 1; i < len(m.Generators); i++ {
		sets, err := g.run(ctx, m.Generators[i], fmt.Sprintf("%s.merge.generators[%d]", p, i), nil)
		if err != nil {
			return nil, err
		}
		byKey := map[string]Params{}
		for _, ps := range sets {
			k := mergeKey(m.MergeKeys, ps)
			if _, dup := byKey[k]; dup {
				return nil, fmt.Errorf("%s.merge.generators[%d]: two parameter sets with merge key %s: merge keys must be unique", p, i, k)
			}
			byKey[k] = ps
		}
		for j, ps := range base {
			o, ok := byKey[baseKeys[j]]
			if !ok {
				continue
			}
			if g.r.goTemplate {
				base[j] = deepMerge(deepCopy(ps), deepCopy(o))
			} else {
				merged := maps.Clone(ps)
				maps.Copy(merged, o)
				base[j] = merged
			}
		}
	}
	return base, nil
}

func mergeKey(keys []string, ps Params) string {
	flat := Flatten(ps)
	k := map[string]any{}
	for _, key := range keys {
		if v, ok := flat[key]; ok {
			k[key] = v
		} else {
			k[key] = nil
		}
	}
	b, _ := json.Marshal(k)
	return string(b)
}

func deepCopy(p Params) Params {
	b, _ := json.Marshal(p)
	var out Params
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = Params{}
	}
	return out
}

// deepMerge merges src over dst: objects merge, src's other values win.
func deepMerge(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		sm, sIsMap := sv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if sIsMap && dIsMap {
			dst[k] = deepMerge(dm, sm)
		} else {
			dst[k] = sv
		}
	}
	return dst
}
