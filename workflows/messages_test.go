package workflows

import (
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestComparisonErrorReadsPlain: a render that no retry can fix shows the
// app's ComparisonError with the activity's own message, as a user reads
// it in ferry app get: without the SDK's activity envelope nor its
// "(type: …, retryable: …)" suffix (versionPlainMessages).
func (s *hooksSuite) TestComparisonErrorReadsPlain() {
	const why = `kustomize build guestbook: accumulating resources: "missing.yaml" not found`
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{},
		temporal.NewNonRetryableApplicationError(why, contract.ErrInvalidManifests, nil)).Once()
	s.renders(nil) // fixed in Git: the next refresh compares
	s.env.RegisterDelayedCallback(func() {
		var cond *app.Condition
		for _, c := range s.query().Status.Conditions {
			if c.Type == conditionComparisonError {
				cond = &c
			}
		}
		s.Require().NotNil(cond, "a ComparisonError")
		s.Equal("render https://git.example.com/apps.git at aaaaaaaa: "+why, cond.Message)
		s.NotContains(cond.Message, "(type:")
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, time.Second)
	s.deleteAt(3*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}
