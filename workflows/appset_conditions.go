package workflows

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Reasons and messages of a set's conditions, in Argo CD's words
// (ApplicationSetReason* and its controller's messages).
const (
	reasonErrorOccurred          = "ErrorOccurred"
	reasonUpToDate               = "ApplicationSetUpToDate"
	reasonParametersGenerated    = "ParametersGenerated"
	reasonParamsGenerationError  = "ApplicationGenerationFromParamsError"
	reasonValidationError        = "ApplicationValidationError"
	reasonCreateApplicationError = "CreateApplicationError"
	reasonUpdateApplicationError = "UpdateApplicationError"
	reasonDeleteApplicationError = "DeleteApplicationError"

	msgParametersGenerated = "Successfully generated parameters for all Applications"
	msgUpToDate            = "All applications have been generated successfully"
)

// setOutcome sums up a reconcile in the conditions as Argo CD's controller
// does: an error (ErrorOccurred True, ResourcesUpToDate False with the
// same message) when an app could not be created or updated, else when one
// could not be deleted, else when a generated app is invalid; otherwise
// ResourcesUpToDate True and ErrorOccurred False, both saying
// msgUpToDate. generated are the apps the generators produced.
func (s *appSetState) setOutcome(now time.Time, res contract.ReconcileResult, invalid []string, generated []app.Application) {
	var writes, deletes []string
	for _, a := range res.Apps {
		if a.Action != contract.AppRefused && a.Action != contract.AppFailed {
			continue
		}
		if slices.ContainsFunc(generated, func(g app.Application) bool { return g.Metadata.Name == a.Name }) {
			writes = append(writes, a.Message)
		} else {
			deletes = append(deletes, a.Message)
		}
	}
	switch {
	case len(writes) > 0:
		s.setError(now, s.writeErrorReason(), joinMessages(writes))
	case len(deletes) > 0:
		s.setError(now, reasonDeleteApplicationError, joinMessages(deletes))
	case len(invalid) > 0:
		s.setError(now, reasonValidationError, validationMessage(invalid))
	default:
		s.setCondition(now, contract.AppSetResourcesUpToDate, "True", reasonUpToDate, msgUpToDate)
		s.setCondition(now, contract.AppSetErrorOccurred, "False", reasonUpToDate, msgUpToDate)
	}
}

// setError sets ErrorOccurred True, and ResourcesUpToDate False with the
// same message, as Argo CD's setApplicationSetStatusCondition does.
func (s *appSetState) setError(now time.Time, reason, msg string) {
	s.setCondition(now, contract.AppSetErrorOccurred, "True", reason, msg)
	s.setCondition(now, contract.AppSetResourcesUpToDate, "False", reasonErrorOccurred, msg)
}

// writeErrorReason is Argo CD's reason when writing the apps failed: its
// controller updates them when the policy lets it, else only creates.
func (s *appSetState) writeErrorReason() string {
	if s.set.Updates() {
		return reasonUpdateApplicationError
	}
	return reasonCreateApplicationError
}

// validationMessage is Argo CD's message for invalid generated apps: the
// last one's, in order, and how many more there are.
func validationMessage(invalid []string) string {
	sorted := slices.Sorted(slices.Values(invalid))
	msg := sorted[len(sorted)-1]
	if len(sorted) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(sorted)-1)
	}
	return msg
}

func joinMessages(msgs []string) string {
	var b bytes.Buffer
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m)
	}
	return b.String()
}

// setCondition sets a condition, keeping its transition time while its
// status stays.
func (s *appSetState) setCondition(now time.Time, typ, status, reason, msg string) {
	for i, c := range s.Status.Conditions {
		if c.Type == typ {
			if c.Status != status {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message = status, reason, msg
			s.Status.Conditions[i] = c
			return
		}
	}
	s.Status.Conditions = append(s.Status.Conditions, contract.AppSetCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: now})
}
