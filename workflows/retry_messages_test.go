package workflows

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestARetriedOperationSaysSoInArgoCDsWords: an automated sync that fails
// with retry.limit 2 says, while it waits, "ERR. Retrying attempt #1 at
// 3:04PM."; it ends Failed with "ERR (retried 2 times).", and the SyncError
// condition carries that message once, as Argo CD's controller writes them.
func (s *appSuite) TestARetriedOperationSaysSoInArgoCDsWords() {
	in := s.retryingForEver()
	in.Spec.SyncPolicy.Retry.Limit = 2
	waiting := regexp.MustCompile(`wave 0 is not healthy: Pod/gb/fails: Degraded\. Retrying attempt #1 at \d{1,2}:\d\d[AP]M\.$`)
	s.env.RegisterDelayedCallback(func() {
		op := s.query().Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationRunning, op.Phase)
		s.EqualValues(1, op.RetryCount)
		s.Regexp(waiting, op.Message)
	}, 15*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		op := v.Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationFailed, op.Phase)
		s.EqualValues(2, op.RetryCount)
		s.True(strings.HasSuffix(op.Message, "wave 0 is not healthy: Pod/gb/fails: Degraded (retried 2 times)."), op.Message)
		var cond string
		for _, c := range v.Status.Conditions {
			if c.Type == conditionSyncError {
				cond = c.Message
			}
		}
		s.Equal("Failed last sync attempt to [aaaaaaaaaaaaaaaa]: "+op.Message, cond)
		s.Equal(1, strings.Count(cond, "retried"), cond)
	}, 2*time.Minute)
	s.deleteAt(3*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
	// Once deleted, the status query answers that the app does not exist.
	_, err := s.env.QueryWorkflow(contract.QueryStatus)
	var gone *contract.AppNotFoundError
	s.True(errors.As(err, &gone) || strings.Contains(err.Error(), `app "guestbook" not found`), "%v", err)
}
