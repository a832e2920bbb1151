package main

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// appError turns a Temporal error into one a user can act on.
func appError(name, doing string, err error) error {
	var denied *app.ProjectError
	if errors.As(err, &denied) {
		return err
	}
	if msg := err.Error(); strings.HasPrefix(msg, fmt.Sprintf("app %q: project ", name)) {
		return err
	}
	// Deleted, or never created: the same answer, as argocd app get's
	// NotFound (contract.AppNotFoundError).
	if ferryclient.IsAppNotFound(err) {
		return &contract.AppNotFoundError{Name: name}
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		msg := strings.TrimSpace(appErr.Message())
		if strings.HasPrefix(msg, fmt.Sprintf("app %q: ", name)) {
			return errors.New(msg) // it names the app already
		}
		return fmt.Errorf("app %q: %s refused: %s", name, doing, msg)
	}
	return fmt.Errorf("app %q: %s: %w", name, doing, err)
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
