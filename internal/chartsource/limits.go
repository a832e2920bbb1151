package chartsource

import (
	"errors"
	"fmt"
)

// LimitError says that a chart is larger than the worker renders.
type LimitError struct {
	What  string
	Limit int64
	Files bool
	Flag  string
}

func (e *LimitError) Error() string {
	unit := "bytes"
	if e.Files {
		unit = "files"
	}
	raise := "raise the worker's limit"
	if e.Flag != "" {
		raise = "raise it with " + e.Flag
	}
	return fmt.Sprintf("%s the %d %s the worker renders; %s", e.What, e.Limit, unit, raise)
}

// IsLimit reports whether err is a *LimitError.
func IsLimit(err error) bool {
	var l *LimitError
	return errors.As(err, &l)
}
