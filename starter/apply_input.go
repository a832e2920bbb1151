package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// applyExtensions are the file names that apply -f DIR picks up, as kubectl
// does.
var applyExtensions = []string{".yaml", ".yml", ".json"}

// applyInput is one Application of `ferry app apply`, read from one file.
type applyInput struct {
	// source is the file it came from, as the user named it or as found in a
	// directory; "-" for stdin.
	source string
	app    *app.Application
	// raw is the file's content, as an Application object gets it.
	raw []byte
}

// inputError is what was wrong with one file.
type inputError struct {
	source string
	err    error
}

// readError is a file that could not be read; its error names the file.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }
func (e readError) Unwrap() error { return e.err }

// invalidInputsError lists every file that apply -f refused, so that a user
// fixes them all in one go; nothing was applied.
type invalidInputsError struct {
	files  int // how many files were read
	errors []inputError
}

func (e *invalidInputsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nothing was applied: %s with the %s given: fix and apply again:", plural(len(e.errors), "problem"), plural(e.files, "file"))
	for _, ie := range e.errors {
		b.WriteString("\n  ")
		b.WriteString(formatInputError(ie))
	}
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// formatInputError puts the file first, as one file's error always has.
func formatInputError(ie inputError) string {
	if ie.source == "" {
		return ie.err.Error()
	}
	return ie.source + ": " + ie.err.Error()
}

// collectApplyInputs reads, parses and validates every Application that the
// values of -f name, before anything is applied. A value is a file, "-" for
// stdin, or a directory: its *.yaml, *.yml and *.json files, sorted, and
// those of its subdirectories too when recursive. Each file holds one
// Application, and no two files may name the same app.
//
// With one file its error is returned as it is; otherwise every bad file is
// listed in one *invalidInputsError.
func collectApplyInputs(values []string, recursive bool, stdin io.Reader, opts app.ValidateOptions) ([]applyInput, error) {
	sources, errs := expandApplySources(values, recursive)
	examined := len(sources) + len(errs) // files, and directories found wanting
	var inputs []applyInput
	firstFile := map[string]string{} // app name -> the file that named it first
	for _, src := range sources {
		a, raw, err := readApplication(src, stdin, opts)
		ok := err == nil
		if err != nil {
			errs = append(errs, inputError{source: src, err: err})
		}
		if a != nil && a.Metadata.Name != "" {
			if prev, dup := firstFile[a.Metadata.Name]; dup {
				errs = append(errs, inputError{source: src, err: fmt.Errorf(
					"app %q is also in %s: each app comes from one file: delete or rename one of them", a.Metadata.Name, prev)})
				ok = false
			} else {
				firstFile[a.Metadata.Name] = src
			}
		}
		if ok {
			inputs = append(inputs, applyInput{source: src, app: a, raw: raw})
		}
	}
	switch {
	case len(errs) == 0:
		return inputs, nil
	case len(errs) == 1 && examined == 1:
		// One file: its error as ferry app apply has always put it.
		var unread readError
		if errors.As(errs[0].err, &unread) {
			return nil, unread.err
		}
		return nil, fmt.Errorf("%s: %w", errs[0].source, errs[0].err)
	}
	return nil, &invalidInputsError{files: len(sources), errors: errs}
}

// readApplication reads one file (or stdin) and parses and validates its
// Application. It returns the Application when it parsed, even if it is not
// valid, so that duplicates are found alongside other mistakes.
func readApplication(src string, stdin io.Reader, opts app.ValidateOptions) (*app.Application, []byte, error) {
	var data []byte
	var err error
	if src == "-" {
		data, err = readAll(stdin)
	} else if data, err = os.ReadFile(src); err != nil {
		err = fmt.Errorf("read application: %w", err)
	}
	if err != nil {
		return nil, nil, readError{err}
	}
	a, err := app.Read(data, opts)
	return a, data, err
}

// expandApplySources turns the values of -f into files, in the order given,
// each directory's files sorted. A file named twice is read once.
func expandApplySources(values []string, recursive bool) ([]string, []inputError) {
	var sources []string
	var errs []inputError
	seen := map[string]bool{}
	add := func(src string) {
		key := src
		if src != "-" {
			key = filepath.Clean(src)
		}
		if !seen[key] {
			seen[key] = true
			sources = append(sources, src)
		}
	}
	for _, v := range values {
		if v == "-" || v == "" {
			add(v)
			continue
		}
		info, err := os.Stat(v)
		if err != nil || !info.IsDir() {
			add(v) // reading it reports what is wrong, as for one file
			continue
		}
		files, err := applyFilesIn(v, recursive)
		switch {
		case err != nil:
			errs = append(errs, inputError{source: v, err: fmt.Errorf("read directory: %w", err)})
		case len(files) == 0:
			hint := "; add -R to read its subdirectories"
			if recursive {
				hint = ""
			}
			errs = append(errs, inputError{source: v, err: fmt.Errorf("directory holds no *.yaml, *.yml or *.json file: point -f at the Applications' files%s", hint)})
		}
		for _, f := range files {
			add(f)
		}
	}
	return sources, errs
}

// applyFilesIn lists the Application files in dir, sorted by path.
func applyFilesIn(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(applyExtensions, filepath.Ext(path)) {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
