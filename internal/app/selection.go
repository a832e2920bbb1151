package app

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// SyncResource names a resource of a selective sync, as Argo CD's
// SyncOperationResource: argocd app sync --resource GROUP:KIND:NAME or
// GROUP:KIND:NAMESPACE/NAME (an empty group is the core group), each part
// a glob; a leading '!' excludes what it matches.
type SyncResource struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Exclude   bool   `json:"exclude,omitempty"`
}

// ParseSyncResource parses the --resource form, as argocd does.
func ParseSyncResource(s string) (SyncResource, error) {
	var r SyncResource
	spec := s
	if rest, ok := strings.CutPrefix(spec, "!"); ok {
		r.Exclude, spec = true, rest
	}
	fields := strings.Split(spec, ":")
	if len(fields) != 3 || fields[1] == "" || fields[2] == "" {
		return SyncResource{}, fmt.Errorf("resource %q: want GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (an empty GROUP for the core group, as in :Service:web)", s)
	}
	r.Group, r.Kind, r.Name = fields[0], fields[1], fields[2]
	if ns, name, ok := strings.Cut(fields[2], "/"); ok {
		r.Namespace, r.Name = ns, name
	}
	if r.Name == "" {
		return SyncResource{}, fmt.Errorf("resource %q: the name after NAMESPACE/ is empty", s)
	}
	return r, nil
}

func (r SyncResource) String() string {
	s := r.Group + ":" + r.Kind + ":"
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	s += r.Name
	if r.Exclude {
		s = "!" + s
	}
	return s
}

// matches reports whether the resource is the one r names; a namespace
// left out matches any, as in Argo CD.
func (r SyncResource) matches(k ResourceKey) bool {
	return globMatchPlain(r.Group, k.Group) && globMatchPlain(r.Kind, k.Kind) && globMatchPlain(r.Name, k.Name) &&
		(r.Namespace == "" || globMatchPlain(r.Namespace, k.Namespace))
}

// Selection is what a selective sync syncs: the resources it names (with
// Argo CD's include and exclude rules) and those carrying every label of
// Labels (argocd app sync --label key=value). The zero Selection selects
// everything.
type Selection struct {
	Resources []SyncResource `json:"resources,omitempty"`
	// Labels are key=value pairs, each required.
	Labels []string `json:"labels,omitempty"`
}

// Empty reports whether the selection selects everything.
func (s Selection) Empty() bool { return len(s.Resources) == 0 && len(s.Labels) == 0 }

// Validate names every malformed label at once.
func (s Selection) Validate() error {
	var bad []string
	for _, l := range s.Labels {
		if k, _, ok := strings.Cut(l, "="); !ok || k == "" {
			bad = append(bad, fmt.Sprintf("label %q: want key=value", l))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

// Selects reports whether a resource with the key and labels is synced.
// As Argo CD's IncludeResource: an exclusion that matches wins; when only
// exclusions are given, the rest is included.
func (s Selection) Selects(k ResourceKey, objLabels map[string]string) bool {
	if !s.selectsLabels(objLabels) {
		return false
	}
	if len(s.Resources) == 0 {
		return true
	}
	included, onlyExclusions := false, true
	for _, r := range s.Resources {
		m := r.matches(k)
		if r.Exclude {
			if m {
				return false
			}
			continue
		}
		onlyExclusions = false
		included = included || m
	}
	return included || onlyExclusions
}

func (s Selection) selectsLabels(objLabels map[string]string) bool {
	set := labels.Set(objLabels)
	for _, l := range s.Labels {
		k, v, _ := strings.Cut(l, "=")
		if !set.Has(k) || set.Get(k) != v {
			return false
		}
	}
	return true
}
