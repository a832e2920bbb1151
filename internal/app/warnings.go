package app

import (
	"errors"
	"fmt"
)

// Warnings name what an accepted app holds that Ferry ignores or cannot
// fetch, as Argo CD keeps them: sync options in spec.syncPolicy.syncOptions
// that Argo CD does not know (Retry=true), and a repoURL whose scheme is a
// placeholder for a tool to rewrite (cnoe://name). ferry app apply prints
// them on stderr, each with the app, the field and what to do.
func (a *Application) Warnings() []string {
	out := a.placeholderWarnings()
	if a.Spec.SyncPolicy == nil {
		return out
	}
	for i, item := range a.Spec.SyncPolicy.SyncOptions {
		var o SyncOptions
		err := o.apply(item)
		if _, unknown := errors.AsType[*UnknownSyncOptionError](err); unknown {
			out = append(out, fmt.Sprintf("application %q: spec.syncPolicy.syncOptions[%d]: %s; it is ignored, as Argo CD ignores it: remove it, or fix its name",
				a.Metadata.Name, i, err))
		}
	}
	return out
}

func (a *Application) placeholderWarnings() []string {
	var out []string
	for i, src := range a.SourceList() {
		scheme := ""
		if !src.IsChartSource() {
			scheme = PlaceholderScheme(src.RepoURL)
		}
		if scheme == "" {
			continue
		}
		field := "spec.source.repoURL"
		if a.IsMultiSource() || a.sourceFromSources {
			field = fmt.Sprintf("spec.sources[%d].repoURL", i)
		}
		out = append(out, fmt.Sprintf("application %q: %s: %q: scheme %q is no Git transport (a placeholder for a tool to rewrite?); "+
			"the app is kept, as Argo CD keeps it, and shows the fetch's error until the URL is written as %s",
			a.Metadata.Name, field, src.RepoURL, scheme, repoURLForms))
	}
	return out
}
