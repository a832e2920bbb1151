package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func TestSummariesNameRegionStageAndHooks(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{syncSummary("us-east-1", syncParams{}, false), "Sync us-east-1"},
		{syncSummary("eu-west-1", syncParams{stage: "stage 2/3"}, true), "Sync eu-west-1 stage 2/3 with Sync hooks"},
		{syncSummary("eu-west-1", syncParams{dryRun: true}, false), "Sync eu-west-1 (dry run)"},
		{compareSummary("ap-south-1"), "Compare ap-south-1"},
		{hooksSummary(contract.HookPreSync, "us-east-1"), "PreSync hooks us-east-1"},
		{deleteHooksSummary(contract.HookPostSync, "us-east-1"), "Delete PostSync hooks us-east-1"},
		{renderSummary(app.Source{RepoURL: "https://git.example.com/apps.git", Path: "guestbook"}, "1a2b3c4d5e6f"),
			"Render https://git.example.com/apps.git guestbook@1a2b3c4d"},
		{renderSummary(app.Source{RepoURL: "https://git.example.com/apps.git"}, "1a2b3c4d5e6f"),
			"Render https://git.example.com/apps.git .@1a2b3c4d"},
		{soakSummary([]string{"us-east-1", "eu-west-1"}), "soak us-east-1, eu-west-1"},
		{retrySummary(2), "retry backoff: retry 2"},
		{childrenSummary("Sync", syncParams{dryRun: true}), "Sync child apps (dry run)"},
	} {
		require.Equal(t, tc.want, tc.got)
	}
}
