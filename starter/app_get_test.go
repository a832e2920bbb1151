package main

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestGetShowsWhoInitiatedTheOperation: ferry app get names who asked for
// the operation under it, as Argo CD's UI does ("automated sync policy"
// for an automated sync), and nothing when nobody was recorded.
func TestGetShowsWhoInitiatedTheOperation(t *testing.T) {
	show := func(by *app.InitiatedBy) string {
		v := &contract.View{Application: app.Application{Metadata: app.ObjectMeta{Name: "web"}}}
		v.Status.OperationState = &app.OperationState{ID: "web-3", Phase: app.OperationSucceeded, Message: "successfully synced",
			Operation: &app.Operation{Info: []app.Info{{Name: "reason", Value: "hotfix"}}, InitiatedBy: by}}
		var out bytes.Buffer
		require.NoError(t, printView(&out, v, ""))
		return out.String()
	}
	require.Contains(t, show(&app.InitiatedBy{Username: "admin"}),
		"Operation:     web-3 Succeeded: successfully synced\nSync Info:     reason: hotfix\nInitiated By:  admin\n")
	require.Contains(t, show(&app.InitiatedBy{Automated: true}), "Initiated By:  automated sync policy\n")
	require.NotContains(t, show(nil), "Initiated By:")
}

// TestCLIIdentity: the CLI dials Temporal, and names itself in a sync
// request, as ferry-cli:USER@HOST.
func TestCLIIdentity(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	require.Regexp(t, "^ferry-cli:[^@]+@"+regexp.QuoteMeta(host)+"$", cliIdentity())
}
