package workflows

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// versionPlainMessages: the messages users read (an operation's, a
// region's, a condition's) carry an activity error's own message, without
// the SDK's " (type: T, retryable: B)" suffix. They feed the digest that
// decides when notifications are evaluated (a condition's message), so a
// recorded run keeps its messages as they were.
const versionPlainMessages = "plain-error-messages"

// rootMessage is the innermost message of an activity error, without the
// activity envelope Temporal adds around it, nor the error type and
// retryability the SDK's Error() adds (versionPlainMessages).
func rootMessage(ctx workflow.Context, err error) string {
	plain := func() bool { return plainMessages(ctx) }
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		if plain() {
			return appErr.Message()
		}
		return appErr.Error()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		if plain() {
			return "Unreachable: no answer from the region's workers (" + timeout.TimeoutType().String() + " timeout)"
		}
		return "Unreachable: no answer from the region's workers (" + timeout.Error() + ")"
	}
	return err.Error()
}

// userMessage is err's message for a user (a ComparisonError, a failed
// operation): what the workflow says around an activity's error, with the
// activity's own message (rootMessage) in place of the SDK's envelope.
func userMessage(ctx workflow.Context, err error) string {
	msg := err.Error()
	if !plainMessages(ctx) {
		return msg
	}
	var actErr *temporal.ActivityError
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &actErr):
		return strings.Replace(msg, actErr.Error(), rootMessage(ctx, actErr), 1)
	case errors.As(err, &appErr):
		return strings.Replace(msg, appErr.Error(), rootMessage(ctx, appErr), 1)
	}
	return msg
}

func plainMessages(ctx workflow.Context) bool {
	return changeVersion(ctx, versionPlainMessages) >= 1
}
