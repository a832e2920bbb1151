package app

import "fmt"

// OrphanedResources is Argo CD's orphaned-resources monitoring of a
// project: with it, the objects in an app's destination namespace that no
// app tracks are the app's orphaned resources (ferry app resources
// --orphaned).
type OrphanedResources struct {
	// Warn asks for the OrphanedResourceWarning condition on apps that
	// have orphaned resources. Left out, it is true, as in Argo CD.
	Warn *bool `json:"warn,omitempty"`
	// Ignore lists objects never counted as orphaned.
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey names objects to ignore: group, kind and name are
// globs; an empty kind or name matches any, an empty group the core group.
type OrphanedResourceKey struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Name  string `json:"name,omitempty"`
}

// ConditionOrphanedResourceWarning is Argo CD's condition of an app that
// has orphaned resources while its project's orphanedResources.warn is on.
const ConditionOrphanedResourceWarning = "OrphanedResourceWarning"

// IsWarn tells whether apps with orphaned resources get a warning.
func (o *OrphanedResources) IsWarn() bool { return o != nil && (o.Warn == nil || *o.Warn) }

// OrphanWarning is the message of the OrphanedResourceWarning condition of
// an app with n orphaned resources, as Argo CD writes it.
func OrphanWarning(n int) string { return fmt.Sprintf("Application has %d orphaned resources", n) }

// IgnoresOrphan tells whether the object k (found in a destination
// namespace, tracked by no app) is not an orphan: a namespaced kind the
// project denies, one the cluster makes in every namespace (the default
// ServiceAccount, the kubernetes Service, kube-root-ca.crt), or one that
// orphanedResources.ignore names. These are Argo CD's rules.
func (p *AppProject) IgnoresOrphan(k ResourceKey) bool {
	if !p.PermitsKind(k.Group, k.Kind, true) {
		return true
	}
	switch {
	case k.Group == "" && k.Kind == "Service" && k.Name == "kubernetes" && k.Namespace == "default",
		k.Group == "" && k.Kind == "ServiceAccount" && k.Name == "default",
		k.Group == "" && k.Kind == "ConfigMap" && k.Name == "kube-root-ca.crt":
		return true
	}
	if p.Spec.OrphanedResources == nil {
		return false
	}
	for _, ig := range p.Spec.OrphanedResources.Ignore {
		// As in Argo CD: kind and name match any when empty, the group is
		// always a glob (so empty is the core group).
		if (ig.Kind == "" || globMatchPlain(ig.Kind, k.Kind)) && globMatchPlain(ig.Group, k.Group) &&
			(ig.Name == "" || globMatchPlain(ig.Name, k.Name)) {
			return true
		}
	}
	return false
}

func (v *validator) orphanedResources(o *OrphanedResources) {
	if o == nil {
		return
	}
	for i, ig := range o.Ignore {
		field := fmt.Sprintf("spec.orphanedResources.ignore[%d]", i)
		for _, f := range []struct{ name, value string }{{"group", ig.Group}, {"kind", ig.Kind}, {"name", ig.Name}} {
			if f.value != "" {
				v.glob(field+"."+f.name, f.value)
			}
		}
	}
}
