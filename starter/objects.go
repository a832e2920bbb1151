package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// objectFiles reads the files of a kind that `ferry <kind> apply -f` takes
// one object a file (AppProject, ApplicationSet).
type objectFiles[T any] struct {
	// noun names the kind in messages: project, applicationset.
	noun string
	// parse reads and validates one object.
	parse func(data []byte) (T, error)
	// name is the object's metadata.name.
	name func(T) string
}

// collect reads and validates every object -f names before anything is
// applied, and lists every bad file at once.
func (k objectFiles[T]) collect(values []string, stdin io.Reader) ([]T, error) {
	sources, errs := expandApplySources(values, false)
	var out []T
	seen := map[string]string{}
	for _, src := range sources {
		obj, err := k.read(src, stdin)
		if err == nil {
			if prev, dup := seen[k.name(obj)]; dup {
				err = fmt.Errorf("%s %q is also in %s: each %s comes from one file: delete or rename one of them", k.noun, k.name(obj), prev, k.noun)
			}
		}
		if err != nil {
			errs = append(errs, inputError{source: src, err: err})
			continue
		}
		seen[k.name(obj)] = src
		out = append(out, obj)
	}
	if len(errs) == 0 {
		return out, nil
	}
	if len(errs) == 1 && len(sources) <= 1 {
		var unread readError
		if errors.As(errs[0].err, &unread) {
			return nil, unread.err
		}
		return nil, fmt.Errorf("%s: %w", errs[0].source, errs[0].err)
	}
	return nil, &invalidInputsError{files: len(sources), errors: errs}
}

// read reads one file (- for stdin) and parses it.
func (k objectFiles[T]) read(src string, stdin io.Reader) (T, error) {
	var data []byte
	var err error
	if src == "-" {
		data, err = readAll(stdin)
	} else if data, err = os.ReadFile(src); err != nil {
		err = fmt.Errorf("read %s: %w", k.noun, err)
	}
	if err != nil {
		var zero T
		return zero, readError{err}
	}
	return k.parse(data)
}

// objectError turns a Temporal error about the object name of a kind
// (noun: project, applicationset) into one a user can act on. notFound is
// the error for an object that does not exist; isNotFound knows it; names
// are how a message that names the object already begins.
func objectError(noun, name, doing string, err error, notFound error, isNotFound func(error) bool, names ...string) error {
	var noWorker *contract.NoWorkerError
	var missing *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case isNotFound(err), errors.As(err, &noWorker):
		return err
	case errors.As(err, &missing):
		return notFound
	case errors.As(err, &appErr):
		msg := strings.TrimSpace(appErr.Message())
		for _, n := range append([]string{noun}, names...) {
			if strings.HasPrefix(msg, fmt.Sprintf("%s %q", n, name)) {
				return errors.New(msg) // it names the object already
			}
		}
		return fmt.Errorf("%s %q: %s refused: %s", noun, name, doing, msg)
	case strings.HasPrefix(err.Error(), noun+" "):
		return err
	}
	return fmt.Errorf("%s %q: %s: %w", noun, name, doing, err)
}
