package main

import (
	"fmt"
	"io"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// printSources lists a multi-source app's sources, one line each: what it
// is, what it tracks and the revision it is at (status.sync.revisions).
func printSources(out io.Writer, v *contract.View) {
	revs := v.Status.Sync.Revisions
	for i, src := range v.Spec.Sources {
		what := "path " + orDefault(src.Path, ".")
		switch {
		case src.IsChartSource():
			what = "chart " + src.Chart
		case src.RendersNothing():
			what = "files only"
		}
		if src.Ref != "" {
			what += " (ref " + src.Ref + ")"
		}
		if src.Name != "" {
			what = src.Name + ": " + what
		}
		rev := "-"
		if i < len(revs) {
			rev = short(revs[i])
		}
		fmt.Fprintf(out, "Source %d:      %s %s, target %s, at %s\n", i, src.RepoURL, what,
			orDefault(src.TargetRevision, app.DefaultTargetRevision), rev)
	}
}
