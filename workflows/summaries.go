package workflows

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

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
	// timerOnboardTurn: a new app waits for its turn at the onboarding gate.
	timerOnboardTurn = "turn to onboard (the onboarding gate)"
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

// postSyncSummary is the static summary of an operation's PostSync workflow.
func postSyncSummary(appName, opID string, regions []string) string {
	return fmt.Sprintf("PostSync hooks of %s, operation %s: %s", appName, opID, strings.Join(regions, ", "))
}
