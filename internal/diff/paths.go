package diff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Paths returns the dotted paths at which a and b differ, descending into
// maps at most depth levels ("spec.template.spec" at depth 3). It names
// paths only, never values, so it is safe for Secrets.
func Paths(a, b map[string]any, depth int) []string {
	var paths []string
	walk("", a, b, depth, &paths)
	sort.Strings(paths)
	return paths
}

func walk(prefix string, a, b map[string]any, depth int, paths *[]string) {
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
			walk(path, ma, mb, depth-1, paths)
			continue
		}
		*paths = append(*paths, path)
	}
}

// maxPaths is how many paths Summarize names before it counts the rest.
const maxPaths = 5

// Summarize joins paths for a message: "spec.replicas, metadata.labels
// and 3 more".
func Summarize(paths []string) string {
	if len(paths) <= maxPaths {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:maxPaths], ", "), len(paths)-maxPaths)
}
