package appset

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// memControl is a control namespace held in memory: ConfigMaps, Secrets
// and resources by resource name.
type memControl struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string]string
	resources  map[string][]map[string]any
}

func (m *memControl) ConfigMap(_ context.Context, name string) (map[string]string, error) {
	if cm, ok := m.configMaps[name]; ok {
		return cm, nil
	}
	return nil, fmt.Errorf("ConfigMap %s not found in namespace argocd: create it there", name)
}

func (m *memControl) Secret(_ context.Context, name string) (map[string]string, error) {
	if s, ok := m.secrets[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("Secret %s not found in namespace argocd: create it there", name)
}

func (m *memControl) List(_ context.Context, gvr schema.GroupVersionResource, name, selector string) ([]map[string]any, error) {
	items, ok := m.resources[gvr.Resource+"."+gvr.Group+"/"+gvr.Version]
	if !ok {
		return nil, fmt.Errorf("list %s: the control cluster serves no such resource", gvr.Resource)
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, it := range items {
		md := it["metadata"].(map[string]any)
		ls := map[string]string{}
		if l, ok := md["labels"].(map[string]any); ok {
			for k, v := range l {
				ls[k] = v.(string)
			}
		}
		if name != "" && md["name"] != name || name == "" && !sel.Matches(labels.Set(ls)) {
			continue
		}
		out = append(out, it)
	}
	return out, nil
}

var _ Control = (*memControl)(nil)

// readSet reads an ApplicationSet of the tests, failing on an error.
func mustRead(data string) *ApplicationSet {
	s, err := Read([]byte(strings.TrimSpace(data) + "\n"))
	if err != nil {
		panic(err)
	}
	return s
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func appNames(r *Result) []string {
	var out []string
	for _, a := range r.Apps {
		out = append(out, a.Metadata.Name)
	}
	return out
}
