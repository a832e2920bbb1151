package workflows

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Summaries are what the Temporal Web UI and CLI show of an app: each
// activity its verb and region (and hook phase), each timer what it waits
// for, each workflow its app, repo, path and regions. They are user
// metadata, not part of command matching, so changing one does not break a
// replay. They name things only: no manifest, no Secret, no credentials
// (Validate refuses a repoURL that carries any).

// Timer summaries: what a workflow is waiting for.
const (
	timerNextPoll     = "next poll"
	timerSettlePoll   = "next poll: resources settling"
	timerSafetyPoll   = "next poll: safety compare (the repository is polled for the app)"
	timerRetryBackoff = "retry backoff"
	timerSoak         = "soak"
	timerSyncWindow   = "sync window opens"
	// timerStragglerGrace: the regions that answered wait this long for the others.
	timerStragglerGrace = "grace for regions yet to answer"
	// timerRegionAnswer: a region that has not answered is shown Unreachable then.
	timerRegionAnswer = "deadline of a region yet to answer"
)

func resolveSummary(repoURL, revision string) string {
	return fmt.Sprintf("Resolve %s %s", repoURL, revision)
}

func renderSummary(src app.Source, sha string) string {
	return fmt.Sprintf("Render %s %s@%s", src.RepoURL, cmp.Or(src.Path, "."), short(sha))
}

func compareSummary(region string) string { return "Compare " + region }

// syncSummary names a region's sync: its rollout stage, whether the Sync
// hooks run within it, and a dry run.
func syncSummary(region string, p syncParams, withHooks bool) string {
	var b strings.Builder
	b.WriteString("Sync " + region)
	if p.stage != "" {
		b.WriteString(" " + p.stage)
	}
	if withHooks {
		b.WriteString(" with Sync hooks")
	}
	if p.dryRun {
		b.WriteString(" (dry run)")
	}
	return b.String()
}

func deleteResourcesSummary(region string) string { return "Delete resources " + region }

func hooksSummary(phase, region string) string { return phase + " hooks " + region }

func deleteHooksSummary(phase, region string) string {
	return "Delete " + phase + " hooks " + region
}

func childrenSummary(verb string, p syncParams) string {
	if p.dryRun {
		return verb + " child apps (dry run)"
	}
	return verb + " child apps"
}

func soakSummary(regions []string) string {
	return timerSoak + " " + strings.Join(regions, ", ")
}

// retrySummary names the wait before retry n of an operation (its retryCount).
func retrySummary(n int64) string {
	return fmt.Sprintf("%s: retry %d", timerRetryBackoff, n)
}

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

// postSyncSummary is the static summary of an operation's PostSync workflow.
func postSyncSummary(appName, opID string, regions []string) string {
	return fmt.Sprintf("PostSync hooks of %s, operation %s: %s", appName, opID, strings.Join(regions, ", "))
}
