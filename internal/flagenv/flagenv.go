// Package flagenv gives every flag of a Ferry binary an environment twin,
// the binary's prefix and the flag's name (FERRY_ for ferry-worker,
// FERRY_SERVER_ for ferry-server), and writes the usage text that names
// them.
package flagenv

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

// EnvName is the environment twin of a flag: prefix and the flag's name in
// upper case with '_' for '-' (FERRY_RENDER_TIMEOUT for --render-timeout
// with prefix FERRY_).
func EnvName(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Apply sets every flag of fs that the command line did not give from
// its environment twin, when that is set and not empty (an empty variable,
// as an unset key of a ConfigMap leaves it, counts as unset). It reports
// every invalid value at once, each naming its variable and what to write.
func Apply(fs *flag.FlagSet, prefix string, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := lookup(EnvName(prefix, f.Name))
		if !ok || v == "" || given[f.Name] {
			return
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q (the twin of --%s): %s", EnvName(prefix, f.Name), v, f.Name, expected(f)))
		}
	})
	return errors.Join(errs...)
}

// expected says what a flag's value must look like.
func expected(f *flag.Flag) string {
	if e, ok := f.Value.(interface{ Expected() string }); ok {
		return e.Expected()
	}
	getter, _ := f.Value.(flag.Getter)
	if getter == nil {
		return "not a valid value"
	}
	switch getter.Get().(type) {
	case bool:
		return "write true or false"
	case int, int64, uint, uint64:
		return "write a whole number"
	case time.Duration:
		return "write a duration such as 90s, 5m or 1h30m"
	}
	return "not a valid value"
}

// Usage is a binary's help text: its usage line, then every flag with
// its placeholder, its environment twin, what it does and its default.
func Usage(fs *flag.FlagSet, prefix, usageLine string) string {
	var b strings.Builder
	b.WriteString(usageLine + `

Every flag can be set in the environment instead, by the ` + prefix + `* variable
named after it; a flag on the command line wins over its variable, and an
empty variable counts as unset.

`)
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, text := flag.UnquoteUsage(f)
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool {
			placeholder = ""
		}
		fmt.Fprintf(&b, "  --%s", f.Name)
		if placeholder != "" {
			fmt.Fprintf(&b, " %s", placeholder)
		}
		fmt.Fprintf(&b, "  (%s)\n", EnvName(prefix, f.Name))
		if !isZeroDefault(f.DefValue) {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		wrap(&b, text, "        ", 80)
	})
	return b.String()
}

// wrap writes text in lines of at most width characters, each indented.
func wrap(b *strings.Builder, text, indent string, width int) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
}

func isZeroDefault(v string) bool {
	switch v {
	case "", "false", "0", "0s":
		return true
	}
	return false
}
