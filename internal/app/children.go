package app

import (
	"encoding/json"
	"fmt"
	"strings"
)

// IsApplication reports whether a rendered manifest is an Argo CD
// Application: an app of apps holds them, and Ferry runs them as apps of
// their own instead of applying them to a cluster.
func IsApplication(apiVersion, kind string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	return group == "argoproj.io" && kind == Kind
}

// ChildrenOf parses and validates the Applications among rendered objects
// (each a JSON-able map, as unstructured objects hold them). The error names
// the parent and the child, and says what to fix in Git.
func ChildrenOf(parent string, objects []map[string]any, opts ValidateOptions) ([]Application, error) {
	var children []Application
	seen := map[string]bool{}
	for _, obj := range objects {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if !IsApplication(apiVersion, kind) {
			continue
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("app %q: child Application: %w", parent, err)
		}
		child, err := Parse(data)
		if err == nil {
			err = Validate(child, opts)
		}
		if err != nil {
			return nil, fmt.Errorf("app %q renders an Application Ferry cannot run: %w; fix it in Git", parent, err)
		}
		name := child.Metadata.Name
		if name == parent || seen[name] {
			return nil, fmt.Errorf("app %q renders Application %q twice or as itself: names of apps must be unique", parent, name)
		}
		seen[name] = true
		children = append(children, *child)
	}
	return children, nil
}
