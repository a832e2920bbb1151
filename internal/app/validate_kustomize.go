package app

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// kustomizeEdits checks what spec.source.kustomize adds to the
// kustomization beyond names, images, labels and annotations: replicas,
// patches and components.
func (v *validator) kustomizeEdits(k *KustomizeSource) {
	const p = "spec.source.kustomize"
	for i, r := range k.Replicas {
		field := fmt.Sprintf("%s.replicas[%d]", p, i)
		if strings.TrimSpace(r.Name) == "" {
			v.add(field+".name", "required: the name of the resource whose replicas to set")
		}
		if _, err := r.ReplicaCount(); err != nil {
			v.add(field+".count", "%v", err)
		}
	}
	for i, patch := range k.Patches {
		field := fmt.Sprintf("%s.patches[%d]", p, i)
		switch {
		case patch.Path == "" && patch.Patch == "":
			v.add(field, "set path (a patch file, relative to spec.source.path) or patch (the patch itself)")
		case patch.Path != "" && patch.Patch != "":
			v.add(field, "set path or patch, not both")
		case patch.Path != "" && !inRepo(patch.Path):
			v.add(field+".path", "%q is not a path inside the repository", patch.Path)
		}
	}
	for i, c := range k.Components {
		field := fmt.Sprintf("%s.components[%d]", p, i)
		switch {
		case strings.TrimSpace(c) == "":
			v.add(field, "empty: write the path of a component, relative to spec.source.path")
		case strings.Contains(c, "://") || strings.HasPrefix(c, "git@"):
			v.add(field, "%q is a remote component: Ferry builds from the repository alone; copy the component into it", c)
		}
	}
}

// inRepo reports whether a path relative to the source's path may stay
// inside the repository: not absolute. Paths with .. are checked again where
// the files are read, against the repository's root.
func inRepo(path string) bool { return !strings.HasPrefix(path, "/") }

// ReplicaCount is the count as a number: an integer, or a string holding
// one, as Argo CD reads it.
func (r KustomizeReplica) ReplicaCount() (int, error) {
	n := r.Count.IntValue()
	if r.Count.Type == intstr.String {
		var err error
		if n, err = strconv.Atoi(strings.TrimSpace(r.Count.StrVal)); err != nil {
			return 0, fmt.Errorf("%q is not a number of replicas", r.Count.StrVal)
		}
	}
	if n < 0 {
		return 0, fmt.Errorf("%d: a number of replicas is not negative", n)
	}
	return n, nil
}
