package app

import (
	"errors"
	"fmt"
	"strings"
)

// ParseOperationInfo parses the name=value pairs of argocd app sync --info
// into the operation's info, in the order given; a name given again takes
// its last value, as Argo CD's map of them does. Unlike Argo CD's parser,
// a value may hold "=" (a URL's query): the name ends at the first one.
func ParseOperationInfo(pairs []string) ([]Info, error) {
	var out []Info
	var errs []error
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("%q: want name=value", p))
			continue
		}
		if err := validInfoName(name); err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", p, err))
			continue
		}
		if i := infoIndex(out, name); i >= 0 {
			out[i].Value = value
			continue
		}
		out = append(out, Info{Name: name, Value: value})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidateOperationInfo refuses an operation's info whose entries have no
// name, a name with white space or "=" (which name=value could not give
// back), or a name twice.
func ValidateOperationInfo(infos []Info) error {
	var errs []error
	for i, in := range infos {
		if err := validInfoName(in.Name); err != nil {
			errs = append(errs, fmt.Errorf("info[%d] %q: %w", i, in.Name, err))
		} else if j := infoIndex(infos, in.Name); j < i {
			errs = append(errs, fmt.Errorf("info[%d] %q: the name is given again (info[%d])", i, in.Name, j))
		}
	}
	return errors.Join(errs...)
}

func validInfoName(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty: want name=value")
	case strings.ContainsAny(name, "= \t\n"):
		return errors.New(`a name holds no white space and no "="`)
	}
	return nil
}

func infoIndex(infos []Info, name string) int {
	for i := range infos {
		if infos[i].Name == name {
			return i
		}
	}
	return -1
}
