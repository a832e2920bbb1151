package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
)

// AppNotFoundError: no app of that name runs. It never existed, or it was
// deleted: once its delete finished, its workflow closes and its status
// query answers this too, as argocd app get answers NotFound
// (applications.argoproj.io "NAME" not found) for a deleted Application.
type AppNotFoundError struct{ Name string }

func (e *AppNotFoundError) Error() string {
	return fmt.Sprintf("app %q not found: create it with ferry app apply -f FILE, or see ferry app list", e.Name)
}

// IsAppNotFound: err says that the app does not run (*AppNotFoundError,
// or Temporal's answer for a workflow that is gone or closed).
func IsAppNotFound(err error) bool {
	var nf *AppNotFoundError
	return errors.As(err, &nf) || isNotFound(err)
}

// isDeletedAnswer: err is the status query's own answer of a deleted app
// (statusView), as Temporal hands a query handler's error to the client.
func isDeletedAnswer(name string, err error) bool {
	var qf *serviceerror.QueryFailed
	return errors.As(err, &qf) && qf.Message == (&AppNotFoundError{Name: name}).Error()
}
