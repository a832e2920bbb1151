package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
)

// histories returns every run of the app's workflow, JSON-encoded as
// `temporal workflow show --output json` writes them.
func histories(t *testing.T, c client.Client, name string) map[string][]byte {
	t.Helper()
	return e2etest.WorkflowHistories(t, c, contract.WorkflowID(name))
}

// recordHistories keeps the app's histories for the replay tests of
// workflows/ when FERRY_RECORD_HISTORIES is set (make record-histories).
func recordHistories(t *testing.T, name string) {
	recordWorkflowHistories(t, contract.WorkflowID(name), name)
}

// recordWorkflowHistories keeps the histories of any workflow, in files
// named after name.
func recordWorkflowHistories(t *testing.T, workflowID, name string) {
	testEnv().RecordHistories(t, workflowID, name)
}

// currentDetails are the current details of the app's latest run, as
// the Web UI shows them (Temporal's built-in metadata query).
func currentDetails(t *testing.T, c client.Client, name string) string {
	t.Helper()
	v, err := c.QueryWorkflow(context.Background(), contract.WorkflowID(name), "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}

// events is the history of the app's runs, first to latest
// (ferryclient.EachEvent): its first run continues as new once it has
// onboarded.
func events(t *testing.T, c client.Client, name string) []*historypb.HistoryEvent {
	t.Helper()
	var out []*historypb.HistoryEvent
	require.NoError(t, ferryclient.EachEvent(context.Background(), c, contract.WorkflowID(name), func(ev *historypb.HistoryEvent) error {
		out = append(out, ev)
		return nil
	}))
	return out
}

// summaryOf is the summary the Web UI shows for an event ("" for none).
func summaryOf(t *testing.T, ev *historypb.HistoryEvent) string {
	t.Helper()
	p := ev.GetUserMetadata().GetSummary()
	if p == nil {
		return ""
	}
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &s))
	return s
}

// TestHistoryNamesEveryStep reads an app's history as the Web UI shows it:
// every Compare and Sync activity is summarised with its region, the
// resolve and render name the repo, the poll timer says what it waits for,
// and the workflow carries a static summary naming app, repo, path and
// regions.
func TestHistoryNamesEveryStep(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "summaries")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("summaries", repo.URL, "app", "summaries", true, "3m")))
	waitApp(t, "summaries", sha, 2*time.Minute)

	var history []*historypb.HistoryEvent
	eventually(t, time.Minute, "the poll timer started", func() (bool, string) {
		history = events(t, c, "summaries")
		for _, ev := range history {
			if ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED && strings.HasPrefix(summaryOf(t, ev), "next poll") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, no timer named next poll", len(history))
	})

	dc := converter.GetDefaultDataConverter()
	compared, synced := map[string]int{}, map[string]int{}
	var rendered, resolved []string
	polls := 0
	for _, ev := range history {
		summary := summaryOf(t, ev)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			attrs := ev.GetActivityTaskScheduledEventAttributes()
			switch attrs.GetActivityType().GetName() {
			case contract.ActivityCompare:
				var in contract.CompareInput
				require.NoError(t, dc.FromPayloads(attrs.GetInput(), &in))
				require.Equal(t, "Compare "+in.Region, summary, "event %d", ev.GetEventId())
				compared[in.Region]++
			case contract.ActivitySync:
				var in contract.SyncInput
				require.NoError(t, dc.FromPayloads(attrs.GetInput(), &in))
				require.Equal(t, "Sync "+in.Region, summary, "event %d", ev.GetEventId())
				synced[in.Region]++
			case contract.ActivityRender:
				rendered = append(rendered, summary)
			}
			require.NotEmpty(t, summary, "activity %s of event %d has a summary", attrs.GetActivityType().GetName(), ev.GetEventId())
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			// Local activities: the resolve, and a new app's first render.
			if s := summary; strings.HasPrefix(s, "Render ") {
				rendered = append(rendered, s)
			} else if s != "" {
				resolved = append(resolved, s)
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			// The poll, the waits of regions that answer at their own
			// pace (a grace for the slower ones, a deadline for each), and
			// a new app's wait for its turn to onboard.
			named := strings.HasPrefix(summary, "next poll") ||
				summary == "grace for regions yet to answer" || summary == "deadline of a region yet to answer" ||
				summary == "turn to onboard (the onboarding gate)"
			require.True(t, named, "timer of event %d is named for what it waits for: %q", ev.GetEventId(), summary)
			if strings.HasPrefix(summary, "next poll") {
				polls++
			}
		}
	}
	require.Positive(t, polls, "a poll timer")
	for _, r := range regions {
		require.Positive(t, compared[r], "a Compare in %s", r)
		require.Positive(t, synced[r], "a Sync in %s", r)
	}
	require.Contains(t, rendered, "Render "+repo.URL+" app@"+short(sha))
	require.Contains(t, resolved, "Resolve "+repo.URL+" main", "the resolve, a local activity, is named too")
	require.Contains(t, resolved, "Ask for a turn to onboard", "so is a new app's ask of the onboarding gate")

	// The run Ferry started carries the summary and details; the run it
	// continued as once onboarded has none (Temporal carries none over),
	// and its current details name the app, its repository and regions.
	first := history[0].GetWorkflowExecutionStartedEventAttributes().GetFirstExecutionRunId()
	desc, err := c.DescribeWorkflow(context.Background(), contract.WorkflowID("summaries"), first)
	require.NoError(t, err)
	summary, err := desc.GetStaticSummary()
	require.NoError(t, err)
	require.Equal(t, "summaries: "+repo.URL+" app → "+strings.Join(regions, ", "), summary)
	details, err := desc.GetStaticDetails()
	require.NoError(t, err)
	require.Contains(t, details, "**regions** "+strings.Join(regions, ", "))
	// The temporal CLI shows it as well.
	require.Contains(t, temporalCLI(t, "workflow", "describe", "--workflow-id", contract.WorkflowID("summaries"), "--run-id", first), summary)
	current := currentDetails(t, c, "summaries")
	for _, want := range []string{"**summaries**", "repo " + repo.URL + " path `app`", "| " + regions[0] + " | Synced |"} {
		require.Contains(t, current, want, "the latest run's current details")
	}

	// The saved queries of docs/concepts/temporal.md find the app, or do not, as its state says.
	id := contract.WorkflowID("summaries")
	for q, want := range map[string]bool{
		"FerrySyncStatus = 'Synced' AND FerryApp = 'summaries'":          true,
		"FerrySyncStatus = 'OutOfSync' AND FerryApp = 'summaries'":       false,
		"FerryHealthStatus = 'Degraded' AND FerryApp = 'summaries'":      false,
		"ExecutionStatus = 'Running' AND FerryHealthStatus != 'Healthy'": false,
		"FerryRepoURL = '" + repo.URL + "'":                              true,
		"FerryRegions = '" + regions[1] + "' AND FerryApp = 'summaries'": true,
		"FerryRevision = '" + sha + "'":                                  true,
		"WorkflowType = 'Application' AND ExecutionStatus = 'Running'":   true,
	} {
		eventually(t, 30*time.Second, q, func() (bool, string) {
			out := temporalCLI(t, "workflow", "list", "--query", q, "--output", "json")
			return strings.Contains(out, `"`+id+`"`) == want, out
		})
	}

	mustFerry(t, "app", "delete", "summaries", "--cascade")
	recordHistories(t, "summaries")
}
