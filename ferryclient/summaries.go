package ferryclient

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// startSummary is the static summary and details of an app's workflow, set
// where it is started: the workflow list shows the summary, the Summary and
// Details panes both. Regions are the destinations as written (a server
// maps to a region through the workers' regions configuration, which a
// client does not know).
func startSummary(a *app.Application) (summary, details string) {
	var regions []string
	for _, d := range a.DestinationList() {
		if strings.TrimSuffix(d.Server, "/") == app.InClusterServer {
			d.Server = app.InClusterName
		}
		regions = append(regions, cmp.Or(d.Name, d.Server))
	}
	src := a.Spec.Source
	if a.IsMultiSource() {
		src = app.Source{RepoURL: a.PrimaryRepoURL(), Path: fmt.Sprintf("(%d sources)", len(a.Spec.Sources)), TargetRevision: "(per source)"}
	}
	path := cmp.Or(src.Path, ".")
	summary = fmt.Sprintf("%s: %s %s → %s", a.Metadata.Name, src.RepoURL, path, strings.Join(regions, ", "))
	details = fmt.Sprintf("**app** %s\n\n**repo** %s\n\n**path** `%s`\n\n**revision** `%s`\n\n**regions** %s\n",
		a.Metadata.Name, src.RepoURL, path, src.Revision(), strings.Join(regions, ", "))
	return summary, details
}
