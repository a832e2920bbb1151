package app

import (
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// PlacedObject is one object of a sync as the API server would see it: its
// namespace placed, and its kind's scope as the region serves it.
type PlacedObject struct {
	Key ResourceKey
	// Namespaced is the kind's scope; meaningless when !Known.
	Namespaced bool
	// Known is false for a kind the region's API server does not serve
	// and no CRD of the same sync defines: its scope cannot be checked.
	Known bool
}

// ObjectViolation is one object a project does not allow.
type ObjectViolation struct {
	Key ResourceKey
	// Rule is the project field that refuses it: clusterResourceWhitelist,
	// namespaceResourceBlacklist, destinations, ...
	Rule   string
	Reason string
}

// ObjectsError is a sync refused in a region because its project does not
// allow some of its objects; nothing of the sync was applied there. With
// Prune, the objects are those a prune would delete, refused once the
// sync's objects were applied: nothing was pruned, and what was applied
// stays.
type ObjectsError struct {
	App, Project, Region string
	Violations           []ObjectViolation
	Prune                bool
}

func (e *ObjectsError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = fmt.Sprintf("%s: %s (%s)", objectName(v.Key), v.Reason, v.Rule)
	}
	if e.Prune {
		return fmt.Sprintf("app %q: project %q does not allow %s in region %s: nothing was pruned there, and what the sync applied stays: delete them by hand, or have the project's owner allow them (ferry project get %s)",
			e.App, e.Project, strings.Join(parts, "; "), e.Region, e.Project)
	}
	return fmt.Sprintf("app %q: project %q does not allow %s in region %s: nothing of this sync was applied there: remove them from the app's manifests, or have the project's owner allow them (ferry project get %s)",
		e.App, e.Project, strings.Join(parts, "; "), e.Region, e.Project)
}

func objectName(k ResourceKey) string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace != "" {
		return kind + " " + k.Namespace + "/" + k.Name
	}
	return kind + " " + k.Name
}

// CheckObjects checks the objects of one sync in region against the
// project, as Argo CD's IsResourcePermitted does: the kind by its scope's
// lists, and a namespaced object's namespace by the destinations. It returns
// nil or an *ObjectsError listing every object refused.
func (p *AppProject) CheckObjects(appName, region string, rc *regions.Config, objs []PlacedObject) error {
	var out []ObjectViolation
	id := identityOf(region, rc)
	for _, o := range objs {
		if v := p.violation(id, region, o); v != nil {
			out = append(out, *v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &ObjectsError{App: appName, Project: p.Metadata.Name, Region: region, Violations: out}
}

// Prohibits tells why the project does not permit the object in region,
// as "namespaced kind Service is not allowed (namespaceResourceBlacklist)",
// or "" when it does. A kind whose scope is unknown is not judged here: a
// sync refuses it (CheckObjects).
func (p *AppProject) Prohibits(region string, rc *regions.Config, o PlacedObject) string {
	if !o.Known {
		return ""
	}
	if v := p.violation(identityOf(region, rc), region, o); v != nil {
		return fmt.Sprintf("%s (%s)", v.Reason, v.Rule)
	}
	return ""
}

func (p *AppProject) violation(id regionIdentity, region string, o PlacedObject) *ObjectViolation {
	k := o.Key
	switch {
	case !o.Known:
		return &ObjectViolation{Key: k, Rule: "clusterResourceWhitelist/namespaceResourceWhitelist",
			Reason: "its kind is not served by the region's API server, so its scope cannot be checked"}
	case o.Namespaced && !p.PermitsKind(k.Group, k.Kind, true):
		return &ObjectViolation{Key: k, Rule: p.KindRule(k.Group, k.Kind, true), Reason: "namespaced kind " + k.Kind + " is not allowed"}
	case !o.Namespaced && !p.PermitsKind(k.Group, k.Kind, false):
		return &ObjectViolation{Key: k, Rule: p.KindRule(k.Group, k.Kind, false), Reason: "cluster-scoped kind " + k.Kind + " is not allowed"}
	}
	if !o.Namespaced {
		return nil
	}
	switch rule := p.destinationRule(id, k.Namespace); rule {
	case "":
		return nil
	case "permitOnlyProjectScopedClusters":
		return &ObjectViolation{Key: k, Rule: rule, Reason: p.unscopedReason(region)}
	default:
		return &ObjectViolation{Key: k, Rule: rule, Reason: fmt.Sprintf("namespace %s of region %s is not a destination", k.Namespace, region)}
	}
}
