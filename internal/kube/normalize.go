package kube

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverMetadata are the metadata fields the API server writes on every
// change: comparing them would make every object look changed.
var serverMetadata = []string{
	"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink",
}

// serverAnnotations are annotations controllers and clients write on the
// live object that no manifest sets.
var serverAnnotations = []string{
	"deployment.kubernetes.io/revision",
	"kubectl.kubernetes.io/last-applied-configuration",
}

// normalize returns a copy of obj's content without what the server
// manages: status, the fields in serverMetadata and serverAnnotations.
func normalize(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy().Object
	delete(out, "status")
	meta, ok := out["metadata"].(map[string]any)
	if !ok {
		return out
	}
	for _, f := range serverMetadata {
		delete(meta, f)
	}
	if ann, ok := meta["annotations"].(map[string]any); ok {
		for _, a := range serverAnnotations {
			delete(ann, a)
		}
		if len(ann) == 0 {
			delete(meta, "annotations")
		}
	}
	return out
}

// diffPaths returns the dotted paths at which a and b differ, descending
// into maps at most depth levels ("spec.template.spec" at depth 3). It
// names paths only, never values, so it is safe for Secrets.
func diffPaths(a, b map[string]any, depth int) []string {
	var paths []string
	walkDiff("", a, b, depth, &paths)
	sort.Strings(paths)
	return paths
}

func walkDiff(prefix string, a, b map[string]any, depth int, paths *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		va, inA := a[k]
		vb, inB := b[k]
		if inA && inB && reflect.DeepEqual(va, vb) {
			continue
		}
		ma, okA := va.(map[string]any)
		mb, okB := vb.(map[string]any)
		if depth > 1 && okA && okB {
			walkDiff(path, ma, mb, depth-1, paths)
			continue
		}
		*paths = append(*paths, path)
	}
}

// maxPaths is how many paths a message names before it counts the rest.
const maxPaths = 5

// summarizePaths joins paths for a message: "spec.replicas, metadata.labels
// and 3 more".
func summarizePaths(paths []string) string {
	if len(paths) <= maxPaths {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:maxPaths], ", "), len(paths)-maxPaths)
}
