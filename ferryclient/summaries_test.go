package ferryclient

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestStartSummaryNamesAppRepoPathAndRegions: what the Web UI shows of a
// workflow the client starts names the app, its source and its regions.
func TestStartSummaryNamesAppRepoPathAndRegions(t *testing.T) {
	a := app.Application{
		APIVersion: app.APIVersion, Kind: app.Kind,
		Metadata: app.ObjectMeta{Name: "guestbook"},
		Spec: app.Spec{
			Source:       app.Source{RepoURL: "https://git.example.com/apps.git", TargetRevision: "main", Path: "guestbook"},
			Destinations: []app.Destination{{Name: "us-east-1", Namespace: "gb"}, {Name: "eu-west-1", Namespace: "gb"}},
		},
	}
	summary, details := startSummary(&a)
	require.Equal(t, "guestbook: https://git.example.com/apps.git guestbook → us-east-1, eu-west-1", summary)
	for _, want := range []string{"**app** guestbook", "**repo** https://git.example.com/apps.git", "**path** `guestbook`",
		"**revision** `main`", "**regions** us-east-1, eu-west-1"} {
		require.Contains(t, details, want)
	}

	// Argo CD's in-cluster destination: the client does not know its region.
	a.Spec.Destinations = nil
	a.Spec.Destination = &app.Destination{Server: "https://kubernetes.default.svc", Namespace: "gb"}
	summary, _ = startSummary(&a)
	require.Equal(t, "guestbook: https://git.example.com/apps.git guestbook → in-cluster", summary)
}
