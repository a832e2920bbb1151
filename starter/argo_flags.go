package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// argoSwitches are the refused flags that are switches in argocd; the
// others take a value.
var argoSwitches = map[string]bool{"validate": true, "sync-retry-refresh": true, "values-literal": true}

// refuseArgoFlags declares Argo CD's flags that Ferry does not take, hidden,
// so that apply names each one with its fix instead of cobra's bare
// "unknown flag".
func refuseArgoFlags(fl *pflag.FlagSet, refused map[string]string) {
	for name := range refused {
		if argoSwitches[name] {
			fl.Bool(name, false, "")
		} else {
			fl.StringArray(name, nil, "")
		}
		_ = fl.MarkHidden(name)
	}
}

// refused lists the refused flags that were given.
func refused(fl *pflag.FlagSet, refused map[string]string) []error {
	var errs []error
	fl.Visit(func(f *pflag.Flag) {
		if fix, ok := refused[f.Name]; ok {
			errs = append(errs, fmt.Errorf("--%s is argocd's, not ferry's: %s", f.Name, fix))
		}
	})
	return errs
}
