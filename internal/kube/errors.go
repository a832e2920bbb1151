package kube

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/ferry-gitops/ferry/internal/app"
)

// ObjectError is the failure of one operation on one object. Its message
// is "Deployment/shop/web: apply: <reason>".
type ObjectError struct {
	// Key names the object.
	Key app.ResourceKey
	// Op is what was being done: "apply", "dry-run apply", "get", "prune",
	// "delete", "list".
	Op string
	// Err is the cause. For a Secret it is a redacted stand-in that keeps
	// the API status (so IsInvalid and apierrors predicates still work) but
	// drops the server's text, which may quote values.
	Err error
}

func (e *ObjectError) Error() string {
	return fmt.Sprintf("%s: %s: %v", keyString(e.Key), e.Op, e.Err)
}

func (e *ObjectError) Unwrap() error { return e.Err }

// message is the error without the object's name, for a Change or a
// ResourceState that already carries the key.
func (e *ObjectError) message() string { return e.Op + ": " + e.Err.Error() }

// ObjectErrors gathers the failures of one call that went on past them:
// Apply, Compare, Delete, DeleteAll, Remaining.
type ObjectErrors struct {
	Errs []*ObjectError
}

func (e *ObjectErrors) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return fmt.Sprintf("%d objects failed: %s", len(msgs), strings.Join(msgs, "; "))
}

// Unwrap lets errors.Is and errors.As look at every failure.
func (e *ObjectErrors) Unwrap() []error {
	errs := make([]error, len(e.Errs))
	for i, err := range e.Errs {
		errs[i] = err
	}
	return errs
}

// objectErrors returns the failures as one error, nil when there are none,
// sorted so the message is stable.
func objectErrors(errs []*ObjectError) error {
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return keyString(errs[i].Key) < keyString(errs[j].Key) })
	return &ObjectErrors{Errs: errs}
}

// newObjectError builds the error for op on key, redacting Secrets.
func newObjectError(key app.ResourceKey, op string, err error) *ObjectError {
	if key.Group == "" && key.Kind == "Secret" {
		err = redact(err)
	}
	return &ObjectError{Key: key, Op: op, Err: err}
}

// invalidError is a request Ferry refuses before the API server sees it:
// a bad application name, duplicate objects, an object without a name.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// IsInvalid tells whether err is a rejection of the manifests themselves,
// which retrying cannot fix: the API server's validation (422 Invalid,
// 400 Bad Request), a kind it does not serve, or Ferry's own checks. For an error gathering several
// objects' failures it is true only when every one of them is invalid, so a
// transient failure beside an invalid object keeps the whole retryable.
func IsInvalid(err error) bool {
	if err == nil {
		return false
	}
	if all, many := everyObject(err, IsInvalid); many {
		return all
	}
	var ours *invalidError
	if errors.As(err, &ours) {
		return true
	}
	// A kind the cluster does not serve: its CRD is missing. The operation's
	// retry policy may wait for it; another attempt at once will not help.
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || meta.IsNoMatchError(err) || isSchemaMismatch(err)
}

// IsRefused is IsInvalid, or the API server's 403 Forbidden: a write that
// the identity it went as may not make (its RBAC, an impersonated
// ServiceAccount's), which no retry changes until someone changes the
// RBAC. For several objects' failures it is true when every one is either.
func IsRefused(err error) bool {
	if err == nil {
		return false
	}
	if all, many := everyObject(err, IsRefused); many {
		return all
	}
	return IsInvalid(err) || apierrors.IsForbidden(err)
}

// IsImmutable tells whether err is the API server refusing a change to a
// field that cannot change once set (a Deployment's selector, a Job's
// template, an immutable ConfigMap's data): only deleting and re-creating
// the object (Force=true) makes such a change.
func IsImmutable(err error) bool {
	if err == nil || !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				if strings.Contains(c.Message, "immutable") {
					return true
				}
			}
		}
		return strings.Contains(status.Status().Message, "immutable")
	}
	return false
}

// redactedError keeps an API error's status for the predicates and says
// only which fields were refused and why, never with which values.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

// Unwrap exposes the cause to errors.As, which apierrors' predicates use.
// The cause's own text is never formatted by this package.
func (e *redactedError) Unwrap() error { return e.cause }

func redact(err error) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return &redactedError{msg: "request failed (details withheld for a Secret)", cause: err}
	}
	st := status.Status()
	msg := fmt.Sprintf("%s (%d)", st.Reason, st.Code)
	if st.Details != nil {
		var causes []string
		for _, c := range st.Details.Causes {
			causes = append(causes, strings.TrimSpace(c.Field+" "+string(c.Type)))
		}
		if len(causes) > 0 {
			msg += ": " + strings.Join(causes, ", ")
		}
	}
	return &redactedError{msg: msg + " (details withheld for a Secret)", cause: err}
}

// everyObject tells, for an error gathering several objects' failures
// (many), whether is holds for every one of them (all); none gathered is
// not all.
func everyObject(err error, is func(error) bool) (all, many bool) {
	var objs *ObjectErrors
	if !errors.As(err, &objs) {
		return false, false
	}
	for _, e := range objs.Errs {
		if !is(e.Err) {
			return false, true
		}
	}
	return len(objs.Errs) > 0, true
}
