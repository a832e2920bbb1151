package app

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// sources checks spec.sources as Argo CD reads it: each entry as a
// spec.source (its errors named at spec.sources[i]), refs unique and on
// Git sources, every $ref of a Helm value file naming one of them, and at
// least one entry that renders.
func (v *validator) sources(a *Application) {
	refs := map[string]int{}
	for i, s := range a.Spec.Sources {
		p := fmt.Sprintf("spec.sources[%d]", i)
		if s.Ref == "" {
			continue
		}
		switch first, dup := refs[s.Ref]; {
		case dup:
			v.add(p+".ref", "%q is also the ref of spec.sources[%d]: give each source its own ref", s.Ref, first)
		case len(validation.IsConfigMapKey(s.Ref)) > 0 || strings.ContainsAny(s.Ref, "$/"):
			v.add(p+".ref", "%q is not a ref name: write letters, digits, '-', '_' or '.', e.g. values", s.Ref)
		default:
			refs[s.Ref] = i
		}
		if s.Chart != "" {
			v.add(p+".ref", "a chart source cannot offer its files to the others (Argo CD refuses it too): put the value files in a Git source with the ref")
		}
	}
	renders := false
	for i := range a.Spec.Sources {
		s := &a.Spec.Sources[i]
		renders = renders || !s.RendersNothing()
		sub := &validator{opts: v.opts, refs: refs}
		if s.RendersNothing() {
			// Only its repository and revision matter: tool options
			// would render nothing.
			sub.gitSource(s)
		} else {
			sub.source(s, a.ReleaseName())
		}
		prefix := fmt.Sprintf("spec.sources[%d]", i)
		for _, fe := range sub.errs {
			if fe.Field == "spec.source" || strings.HasPrefix(fe.Field, "spec.source.") {
				fe.Field = prefix + strings.TrimPrefix(fe.Field, "spec.source")
			}
			v.errs = append(v.errs, fe)
		}
	}
	if !renders {
		v.add("spec.sources", "every source has a ref and no path, so none renders anything: give the source to deploy a path or a chart")
	}
}

// refValueFile checks a Helm value file naming another source's file,
// $ref/path: the ref must be one of spec.sources', the path inside its
// repository.
func (v *validator) refValueFile(field, vf string) {
	ref, p, _ := RefValueFile(vf)
	switch _, ok := v.refs[ref]; {
	case v.refs == nil:
		v.add(field, "%q names the files of another source ($%s), which only an entry of spec.sources can do: move the sources to spec.sources and give the one holding the file ref: %s, or commit the file beside the chart", vf, ref, ref)
	case !ok:
		v.add(field, "%q: no entry of spec.sources has ref: %s; add it to the source holding the file", vf, ref)
	case p == "":
		v.add(field, "%q names no file: write $%s/path/to/values.yaml, the path from the root of that source's repository", vf, ref)
	case strings.HasPrefix(p, "/") || escapesRepo(path.Clean(p)):
		v.add(field, "%q leaves the repository of ref %s: write the path from its root, without '..'", vf, ref)
	}
}
