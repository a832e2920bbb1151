package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"
)

// changeArgoRetryMessages: a retried operation's message says so in Argo
// CD's words (its controller's processRequestedAppOperation); before it,
// "retrying (attempt N) after: ERR" and no count at the end. The message
// feeds the SyncError condition, which notifications look at.
const changeArgoRetryMessages = "argocd-retry-messages"

func argoRetryMessages(ctx workflow.Context) bool {
	return changeVersion(ctx, changeArgoRetryMessages) >= 1
}

// retryAtMessage is a failed attempt's message while the operation waits
// to retry: "ERR. Retrying attempt #N at 3:04PM.", as Argo CD (which
// writes its controller's local time; Ferry writes UTC, as the workflow's
// clock).
func retryAtMessage(failure string, retryCount int64, at time.Time) string {
	return fmt.Sprintf("%s. Retrying attempt #%d at %s.", failure, retryCount, at.UTC().Format(time.Kitchen))
}

// retryingMessage is the message of a retry's attempt while it begins:
// "Retrying operation. Attempt #N", as Argo CD.
func retryingMessage(retryCount int64) string {
	return fmt.Sprintf("Retrying operation. Attempt #%d", retryCount)
}

// retriedMessage is the final message of an operation that failed after
// retries: "ERR (retried N times).", as Argo CD; unchanged without one.
func retriedMessage(failure string, retryCount int64) string {
	if retryCount == 0 {
		return failure
	}
	return failure + retriedSuffix(retryCount)
}

func retriedSuffix(retryCount int64) string {
	return fmt.Sprintf(" (retried %d times).", retryCount)
}
