package app

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidateProject checks the values of an AppProject that ParseProject has
// read and returns nil or a *ValidationError (Kind ProjectKind) listing
// every problem.
func ValidateProject(p *AppProject) error {
	if p == nil {
		return &ValidationError{Kind: ProjectKind, Errors: []FieldError{{Field: "(root)", Message: "no AppProject given"}}}
	}
	v := &validator{}
	v.projectObject(p)
	v.childProjects(p)
	for i, r := range p.Spec.SourceRepos {
		field := fmt.Sprintf("spec.sourceRepos[%d]", i)
		switch {
		case strings.TrimSpace(strings.TrimPrefix(r, "!")) == "":
			v.add(field, "empty: write a repository URL or a glob of them, e.g. https://git.example.com/team-a/*, or '*' for any")
		default:
			v.glob(field, normalizeRepoURL(strings.TrimPrefix(r, "!")), '/')
		}
	}
	for i, d := range p.Spec.Destinations {
		field := fmt.Sprintf("spec.destinations[%d]", i)
		if d.Name == "" && d.Server == "" {
			v.add(field+".name", "required: the region (a glob, e.g. us-*, or '*') this destination allows; or set server")
		}
		for _, f := range []struct{ name, value string }{{"name", d.Name}, {"server", d.Server}, {"namespace", d.Namespace}} {
			if f.value != "" {
				v.glob(field+"."+f.name, strings.TrimPrefix(f.value, "!"))
			}
		}
	}
	v.validateServiceAccounts(p.Spec.DestinationServiceAccounts)
	v.groupKinds("spec.clusterResourceWhitelist", p.Spec.ClusterResourceWhitelist)
	v.groupKinds("spec.clusterResourceBlacklist", p.Spec.ClusterResourceBlacklist)
	v.groupKinds("spec.namespaceResourceWhitelist", p.Spec.NamespaceResourceWhitelist)
	v.groupKinds("spec.namespaceResourceBlacklist", p.Spec.NamespaceResourceBlacklist)
	v.syncWindows(p.Spec.SyncWindows)
	v.orphanedResources(p.Spec.OrphanedResources)
	v.sourceNamespaces(p.Spec.SourceNamespaces)
	v.roles(p)
	if len(v.errs) == 0 {
		return nil
	}
	return &ValidationError{Kind: ProjectKind, App: p.Metadata.Name, Errors: v.errs}
}

func (v *validator) projectObject(p *AppProject) {
	switch p.APIVersion {
	case APIVersion:
	case "":
		v.add("apiVersion", "required: write apiVersion: %s", APIVersion)
	default:
		v.add("apiVersion", "%q is not supported: write apiVersion: %s", p.APIVersion, APIVersion)
	}
	if p.Kind != ProjectKind {
		v.add("kind", "required: write kind: %s", ProjectKind)
	}
	md := p.Metadata
	switch errs := validation.IsDNS1123Subdomain(md.Name); {
	case md.Name == "":
		v.add("metadata.name", "required: the project's name, e.g. team-a")
	case len(errs) > 0:
		v.add("metadata.name", "%q is not a valid name: %s", md.Name, strings.Join(errs, "; "))
	case len(md.Name) > MaxProjectNameLength:
		v.add("metadata.name", "%q is %d characters long: shorten it to at most %d", md.Name, len(md.Name), MaxProjectNameLength)
	}
	v.metaFields(md)
	for i, f := range md.Finalizers {
		// Argo CD's finalizer keeps a project while apps use it; Ferry
		// always does, so the finalizer asks for nothing more.
		if f != ResourcesFinalizer {
			v.add(fmt.Sprintf("metadata.finalizers[%d]", i), "%q is not a finalizer Ferry knows for a project: remove it (Ferry never deletes a project that apps use)", f)
		}
	}
}

func (v *validator) glob(field, pattern string, separators ...rune) {
	if _, err := glob.Compile(pattern, separators...); err != nil {
		v.add(field, "%q is not a valid glob (%v): fix the pattern", pattern, err)
	}
}

func (v *validator) groupKinds(field string, list []GroupKind) {
	for i, gk := range list {
		p := fmt.Sprintf("%s[%d]", field, i)
		if gk.Kind == "" {
			v.add(p+".kind", "required: a kind or a glob of kinds, e.g. Deployment or '*'")
		} else if _, err := path.Match(gk.Kind, ""); err != nil {
			v.add(p+".kind", "%q is not a valid glob (%v): fix the pattern", gk.Kind, err)
		}
		if _, err := path.Match(gk.Group, ""); err != nil {
			v.add(p+".group", "%q is not a valid glob (%v): fix the pattern", gk.Group, err)
		}
	}
}

func (v *validator) syncWindows(windows []SyncWindow) {
	for i, w := range windows {
		field := fmt.Sprintf("spec.syncWindows[%d]", i)
		switch w.Kind {
		case WindowAllow, WindowDeny:
		case "":
			v.add(field+".kind", "required: allow (syncs run only while the window is active) or deny (no sync runs while it is)")
		default:
			v.add(field+".kind", "%q is not a kind of window: write allow or deny", w.Kind)
		}
		if w.Schedule == "" {
			v.add(field+".schedule", "required: when the window opens, as 5-field cron (minute hour day-of-month month day-of-week), e.g. '0 22 * * *'")
		} else if _, err := windowParser.Parse(w.Schedule); err != nil {
			v.add(field+".schedule", "%q is not a 5-field cron schedule (%v): write minute hour day-of-month month day-of-week, e.g. '0 22 * * *'", w.Schedule, err)
		}
		if w.Duration == "" {
			v.add(field+".duration", "required: how long the window stays open, e.g. 1h or 30m")
		} else if d, err := time.ParseDuration(w.Duration); err != nil || d <= 0 {
			v.add(field+".duration", "%q is not a positive duration: write e.g. 1h, 30m or 1h30m", w.Duration)
		}
		if _, err := windowLocation(w.TimeZone); err != nil {
			v.add(field+".timeZone", "%q is not a time zone: write an IANA name such as Europe/Berlin or America/New_York, or leave it out for UTC", w.TimeZone)
		}
		if len(w.Applications)+len(w.Namespaces)+len(w.Clusters) == 0 {
			v.add(field, msgNoMatcher)
		}
		for _, m := range []struct {
			name     string
			patterns []string
		}{{"applications", w.Applications}, {"namespaces", w.Namespaces}, {"clusters", w.Clusters}} {
			for j, pattern := range m.patterns {
				f := fmt.Sprintf("%s.%s[%d]", field, m.name, j)
				if pattern == "" {
					v.add(f, "empty: write a name or a glob, e.g. '*'")
					continue
				}
				v.glob(f, pattern)
			}
		}
	}
}
