package rbac

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// ConfigMapName is the ConfigMap of the control namespace that holds the
// policy, as Argo CD names it.
const ConfigMapName = "argocd-rbac-cm"

// Policy is argocd-rbac-cm, parsed and checked.
type Policy struct {
	// Lines are the p and g lines of policy.csv and of every
	// policy.<name>.csv key (in the keys' order), without the builtin roles.
	Lines []Line
	// Default is policy.default: the role every authenticated user has.
	Default string
	// Scopes are the token claims whose values are subjects (groups,
	// email…), from scopes; default [groups].
	Scopes []string
	// Regex is policy.matchMode: regex (else glob).
	Regex bool
}

// Line is one policy line: p with 5 fields, or g with 2.
type Line struct {
	Kind   string // "p" or "g"
	Fields []string
	// Where names the key and line it came from ("policy.csv line 3").
	Where string
}

// ParseError lists every problem of a policy, each naming its key and
// line and what to write instead.
type ParseError struct{ Problems []string }

func (e *ParseError) Error() string {
	return "argocd-rbac-cm: " + strings.Join(e.Problems, "; ")
}

// Parse reads argocd-rbac-cm's data. A policy with problems is refused
// whole, every problem said at once: the caller keeps the last good one.
func Parse(data map[string]string) (*Policy, error) {
	p := &Policy{Default: strings.TrimSpace(data["policy.default"]), Scopes: []string{"groups"}}
	var problems []string
	switch mode := strings.TrimSpace(data["policy.matchMode"]); mode {
	case "", "glob":
	case "regex":
		p.Regex = true
	default:
		problems = append(problems, fmt.Sprintf("policy.matchMode %q is not a match mode: write glob or regex", mode))
	}
	if raw := strings.TrimSpace(data["scopes"]); raw != "" {
		var scopes []string
		if err := yaml.Unmarshal([]byte(raw), &scopes); err != nil {
			problems = append(problems, fmt.Sprintf("scopes %q is not a list: write it as [groups, email]", raw))
		} else {
			p.Scopes = scopes
		}
	}
	for _, key := range policyKeys(data) {
		lines, probs := parseCSV(key, data[key], p.Regex)
		p.Lines = append(p.Lines, lines...)
		problems = append(problems, probs...)
	}
	if len(problems) > 0 {
		return nil, &ParseError{Problems: problems}
	}
	return p, nil
}

// policyKeys are policy.csv first, then the policy.<name>.csv keys in
// name order, as Argo CD joins them.
func policyKeys(data map[string]string) []string {
	var keys []string
	for k := range data {
		if k != "policy.csv" && strings.HasPrefix(k, "policy.") && strings.HasSuffix(k, ".csv") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := data["policy.csv"]; ok {
		keys = append([]string{"policy.csv"}, keys...)
	}
	return keys
}

// parseCSV reads the lines of one key, checking each.
func parseCSV(key, text string, regex bool) ([]Line, []string) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comment, r.TrimLeadingSpace, r.FieldsPerRecord = '#', true, -1
	var lines []Line
	var problems []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		where := fmt.Sprintf("%s line %d", key, line)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			if _, ok := err.(*csv.ParseError); ok {
				break
			}
			continue
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if len(rec) == 1 && rec[0] == "" {
			continue
		}
		if prob := checkLine(rec, regex); prob != "" {
			problems = append(problems, where+": "+prob)
			continue
		}
		lines = append(lines, Line{Kind: rec[0], Fields: rec[1:], Where: where})
	}
	return lines, problems
}

// checkLine says what is wrong with a line, or "".
func checkLine(rec []string, regex bool) string {
	switch rec[0] {
	case "p":
		if len(rec) != 6 {
			return fmt.Sprintf("a p line has 5 fields after p (subject, resource, action, object, allow|deny), this one %d", len(rec)-1)
		}
		res, act, eft := rec[2], rec[3], rec[5]
		if !slices.Contains(Resources, res) && !strings.ContainsAny(res, "*?[{|.(") {
			return fmt.Sprintf("resource %q is not one of %s", res, strings.Join(Resources, ", "))
		}
		if eft != "allow" && eft != "deny" {
			return fmt.Sprintf("effect %q is neither allow nor deny", eft)
		}
		if act == "" || rec[1] == "" || rec[4] == "" {
			return "subject, action and object may not be empty (write * for any)"
		}
		for _, f := range rec[1:5] {
			if why := validPattern(f, regex); why != "" {
				return fmt.Sprintf("%q is not a valid pattern: %s", f, why)
			}
		}
	case "g":
		if len(rec) != 3 || rec[1] == "" || rec[2] == "" {
			return "a g line has 2 fields after g: the user or group, and the role it has"
		}
	default:
		return fmt.Sprintf("a line starts with p or g, not %q", rec[0])
	}
	return ""
}
