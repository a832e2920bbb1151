package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestBadInputIsRefused: bad Applications and bad requests get a clear
// error from ferry app apply and from the update validators; nothing is
// started or changed.
func TestBadInputIsRefused(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	good := appYAML("strict", "http://127.0.0.1:1/none.git", "app", "strict", true, "3m")
	cases := []struct {
		name, file, want string
	}{
		{"no repoURL", strings.Replace(good, "    repoURL: http://127.0.0.1:1/none.git\n", "", 1), "spec.source.repoURL"},
		{"unknown region", strings.Replace(good, "name: eu-west-1", "name: mars", 1), `unknown region "mars"`},
		{"unsupported field", strings.Replace(good, "  source:\n", "  sources: [{repoURL: https://a.example/r.git}, {repoURL: https://b.example/r.git}]\n  source:\n", 1), "spec.sources"},
		{"malformed YAML", strings.Replace(good, "  source:\n", "  source:\n   - oops: [\n", 1), "line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ferry(t, "app", "apply", "-f", writeFile(t, tc.file))
			require.Error(t, err, out)
			require.Contains(t, out, tc.want)
			_, err = c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID("strict"), "")
			var notFound *serviceerror.NotFound
			require.True(t, errors.As(err, &notFound), "no workflow started: %v", err)
		})
	}

	// A real app, then updates with bad requests: each refused, nothing changed.
	repo := newRepo(t, "strict")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, strings.Replace(good, "http://127.0.0.1:1/none.git", repo.URL, 1)))
	waitApp(t, "strict", sha, 2*time.Minute)

	out, err := ferry(t, "app", "rollback", "strict", "0")
	require.Error(t, err)
	require.Contains(t, out, "rollback is not allowed while automated sync is on")

	bad, err := app.Parse([]byte(strings.Replace(good, "http://127.0.0.1:1/none.git", repo.URL, 1)))
	require.NoError(t, err)
	bad.Spec.Destinations = append(bad.Spec.Destinations, app.Destination{Name: "mars"})
	handle, err := c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID("strict"), UpdateName: contract.UpdateSpec,
		Args: []any{bad}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(context.Background(), nil)
	}
	require.ErrorContains(t, err, `unknown region "mars"`)
	v, err := queryView(t, c, "strict")
	require.NoError(t, err)
	require.Len(t, v.Spec.Destinations, len(regions), "the refused spec changed nothing")

	mustFerry(t, "app", "delete", "strict", "--cascade")
}
