package app

import (
	"errors"
	"fmt"
)

// LocalSyncProblems are why the app cannot take a local sync (ferry app
// sync --local), as argocd app sync --local refuses it: automated sync
// on (but for a dry run), several sources, or a chart of a repository.
// The workflow's validator and the CLI, before it sends the tree, ask it.
func LocalSyncProblems(a *Application, dryRun bool) []error {
	var errs []error
	if a.AutomatedSync() && !dryRun {
		errs = append(errs, fmt.Errorf("a local sync is refused while automated sync is on (it would put Git back at once), as in Argo CD: "+
			"remove spec.syncPolicy.automated first (ferry app set %s --sync-policy none), or try the manifests with --dry-run", a.Metadata.Name))
	}
	if a.IsMultiSource() {
		errs = append(errs, errors.New("the app has spec.sources: a local sync takes an app of one source, as argocd app sync --local"))
	} else if a.Spec.Source.IsChartSource() {
		errs = append(errs, fmt.Errorf("spec.source.chart %q renders a chart of a Helm repository, not a directory: a local sync takes an app whose source is a path of Git",
			a.Spec.Source.Chart))
	}
	return errs
}
