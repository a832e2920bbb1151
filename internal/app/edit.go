package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The edits below are those of argocd app set, unset, add-source and
// remove-source: small changes to a spec that Read checks afterwards, as
// it checks a file.

// SetParameter sets a Helm parameter, replacing the one of the same name
// (helm --set: the last value of a name wins).
func (h *HelmSource) SetParameter(p HelmParameter) {
	h.Parameters = upsert(h.Parameters, p, func(q HelmParameter) bool { return q.Name == p.Name })
}

// RemoveParameter removes the Helm parameter called name; false when there
// is none.
func (h *HelmSource) RemoveParameter(name string) bool {
	return remove(&h.Parameters, func(p HelmParameter) bool { return p.Name == name })
}

// SetFileParameter sets a Helm file parameter, replacing the one of the
// same name.
func (h *HelmSource) SetFileParameter(p HelmFileParameter) {
	h.FileParameters = upsert(h.FileParameters, p, func(q HelmFileParameter) bool { return q.Name == p.Name })
}

// KustomizeImageName is the image an entry of kustomize.images overrides:
// "nginx" of "nginx=registry/nginx:1.27", "nginx:1.27" and
// "nginx@sha256:…".
func KustomizeImageName(image string) string {
	if name, _, ok := strings.Cut(image, "="); ok {
		return name
	}
	if name, _, ok := strings.Cut(image, "@"); ok {
		return name
	}
	// A tag follows the last colon after the last slash: a registry's port
	// (host:5000/app) is no tag.
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[:colon]
	}
	return image
}

// SetImage sets a kustomize image override, replacing the one of the same
// image (kustomize edit set image).
func (k *KustomizeSource) SetImage(image string) {
	name := KustomizeImageName(image)
	k.Images = upsert(k.Images, image, func(s string) bool { return KustomizeImageName(s) == name })
}

// RemoveImage removes the override of the image called name (or given as
// an override); false when there is none.
func (k *KustomizeSource) RemoveImage(image string) bool {
	name := KustomizeImageName(image)
	return remove(&k.Images, func(s string) bool { return KustomizeImageName(s) == name })
}

// SetReplica sets the replica count of the resources called r.Name.
func (k *KustomizeSource) SetReplica(r KustomizeReplica) {
	k.Replicas = upsert(k.Replicas, r, func(q KustomizeReplica) bool { return q.Name == r.Name })
}

// RemoveReplica removes the replica count of the resources called name.
func (k *KustomizeSource) RemoveReplica(name string) bool {
	return remove(&k.Replicas, func(r KustomizeReplica) bool { return r.Name == name })
}

// SetSyncOption adds a sync option, replacing one with the same key
// (Prune=false replaces Prune=true): an app has one value per option.
func (p *SyncPolicy) SetSyncOption(option string) {
	key, _, _ := strings.Cut(option, "=")
	p.SyncOptions = upsert(p.SyncOptions, option, func(o string) bool { k, _, _ := strings.Cut(o, "="); return k == key })
}

// RemoveSyncOption removes option: the very item, or every item of its
// key when it names only the key (Prune).
func (p *SyncPolicy) RemoveSyncOption(option string) bool {
	return remove(&p.SyncOptions, func(o string) bool {
		k, _, _ := strings.Cut(o, "=")
		return o == option || (!strings.Contains(option, "=") && k == option)
	})
}

// DropEmpty drops the sections of the source left empty by an edit, as they
// were before it: a source without kustomize options has no kustomize.
func (s *Source) DropEmpty() {
	if s.Helm != nil && isZero(*s.Helm) {
		s.Helm = nil
	}
	if s.Kustomize != nil && isZero(*s.Kustomize) {
		s.Kustomize = nil
	}
	if s.Directory != nil && isZero(*s.Directory) {
		s.Directory = nil
	}
}

// DropEmpty drops a sync policy left empty by an edit.
func (s *Spec) DropEmpty() {
	if p := s.SyncPolicy; p != nil && isZero(*p) {
		s.SyncPolicy = nil
	}
}

// isZero: v writes nothing (an empty list is as good as none).
func isZero[T any](v T) bool {
	b, err := json.Marshal(v)
	return err == nil && string(b) == "{}"
}

// SourceAt is the source at position (1-based, as argocd's
// --source-position): of spec.sources for a multi-source app, where a
// position is required, else spec.source, where it may be 0 or 1.
func (a *Application) SourceAt(position int) (*Source, error) {
	if !a.IsMultiSource() {
		if position > 1 {
			return nil, fmt.Errorf("source position %d: the app has one source (spec.source): leave --source-position out, or give 1", position)
		}
		return &a.Spec.Source, nil
	}
	if position < 1 || position > len(a.Spec.Sources) {
		return nil, fmt.Errorf("the app has %d sources (spec.sources): give --source-position 1 to %d", len(a.Spec.Sources), len(a.Spec.Sources))
	}
	return &a.Spec.Sources[position-1], nil
}

// AddSource appends a source: a single-source app becomes a multi-source
// one, its spec.source the first of spec.sources.
func (a *Application) AddSource(s Source) {
	if !a.IsMultiSource() {
		a.Spec.Sources = []Source{a.Spec.Source}
		a.Spec.Source = Source{}
	}
	a.Spec.Sources = append(a.Spec.Sources, s)
}

// RemoveSource removes the source at position (1-based). The last source
// is never removed; an app left with one source has it as spec.source, as
// Read reads a spec.sources of one.
func (a *Application) RemoveSource(position int) error {
	if !a.IsMultiSource() {
		return fmt.Errorf("the app has one source (spec.source), and an app needs a source: change it with ferry app set, or delete the app")
	}
	if position < 1 || position > len(a.Spec.Sources) {
		return fmt.Errorf("source position %d: the app has %d sources: give --source-position 1 to %d", position, len(a.Spec.Sources), len(a.Spec.Sources))
	}
	a.Spec.Sources = slices.Delete(a.Spec.Sources, position-1, position)
	if len(a.Spec.Sources) == 1 {
		a.Spec.Source, a.Spec.Sources = a.Spec.Sources[0], nil
	}
	return nil
}

// upsert replaces the entry of list that is same as v, or appends v.
func upsert[T any](list []T, v T, same func(T) bool) []T {
	if i := slices.IndexFunc(list, same); i >= 0 {
		list[i] = v
		return list
	}
	return append(list, v)
}

// remove removes the entries of *list that match; false when none did.
func remove[T any](list *[]T, match func(T) bool) bool {
	n := len(*list)
	*list = slices.DeleteFunc(*list, match)
	return len(*list) != n
}
