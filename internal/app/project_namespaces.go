package app

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gobwas/glob"
)

// sourceNamespaces follows Argo CD's AppProject.IsAppNamespacePermitted
// (glob.MatchStringInList in its REGEXP mode):
//
//   - An Application in the control namespace may always use the project.
//   - Any other namespace must match an entry: an entry written /…/ is a
//     regular expression, matched anywhere in the name unless anchored
//     (Go's RE2 syntax; Argo CD's engine also has lookarounds, which
//     ValidateProject refuses); every entry is also a gobwas glob over the
//     whole name ("*" any, "?" one character, "[a-z]", "{a,b}").
//   - Empty or left out, no other namespace may. There is no "!" negation
//     here: Argo CD reads "!team-a" as a glob that matches no namespace,
//     so ValidateProject refuses it rather than let it look like a deny.

// PermitsSourceNamespace reports whether an Application in namespace ns may
// belong to the project (spec.sourceNamespaces). ns is "" for an app in
// the control namespace, which every project permits: pass "" for it, not
// the control namespace's name.
func (p *AppProject) PermitsSourceNamespace(ns string) bool {
	return ns == "" || NamespaceListed(p.Spec.SourceNamespaces, ns)
}

// NamespaceListed reports whether namespace ns matches an entry of
// patterns, read as sourceNamespaces are (and as Argo CD reads its
// application.namespaces): globs, or regular expressions between slashes.
func NamespaceListed(patterns []string, ns string) bool {
	for _, pattern := range patterns {
		if re, ok := namespaceRegexp(pattern); ok && re != nil && re.MatchString(ns) {
			return true
		}
		if globMatchPlain(pattern, ns) {
			return true
		}
	}
	return false
}

// namespaceRegexp is the regular expression of a /…/ entry: ok tells the
// entry is written so, re is nil when it does not compile.
func namespaceRegexp(pattern string) (re *regexp.Regexp, ok bool) {
	if len(pattern) < 2 || !strings.HasPrefix(pattern, "/") || !strings.HasSuffix(pattern, "/") {
		return nil, false
	}
	re, err := regexp.Compile(pattern[1 : len(pattern)-1])
	if err != nil {
		return nil, true
	}
	return re, true
}

// CheckSourceNamespace returns a *SourceNamespaceError when an Application
// called appName in namespace ns ("" for the control namespace) may not use
// the project; nil when it may.
func (p *AppProject) CheckSourceNamespace(appName, ns string) error {
	if p.PermitsSourceNamespace(ns) {
		return nil
	}
	return NewSourceNamespaceError(appName, ns, p.Metadata.Name)
}

// SourceNamespaceError is an Application in a namespace its project's
// sourceNamespaces do not list. Argo CD's controller then neither
// reconciles nor syncs it, and says so in these words.
type SourceNamespaceError struct {
	App, Namespace, Project string
}

// NewSourceNamespaceError is the error of Application app in namespace
// that project does not permit.
func NewSourceNamespaceError(app, namespace, project string) *SourceNamespaceError {
	return &SourceNamespaceError{App: app, Namespace: namespace, Project: project}
}

// Error is Argo CD's message (its controller's ErrProjectNotPermitted).
func (e *SourceNamespaceError) Error() string {
	return fmt.Sprintf("application '%s' in namespace '%s' is not permitted to use project '%s'", e.App, e.Namespace, e.Project)
}

// Fix says what to do, for a message that may say more than Argo CD's.
func (e *SourceNamespaceError) Fix() string {
	return fmt.Sprintf("add %s (or a glob of it) to spec.sourceNamespaces of project %q, or move the Application to a namespace the project lists", e.Namespace, e.Project)
}

func (v *validator) sourceNamespaces(list []string) {
	for i, pattern := range list {
		if msg := NamespacePatternProblem("sourceNamespaces", pattern); msg != "" {
			v.add(fmt.Sprintf("spec.sourceNamespaces[%d]", i), "%s", msg)
		}
	}
}

// NamespacePatternProblem says what is wrong with an entry of list, a list
// of namespaces that NamespaceListed reads, and how to fix it; "" when
// nothing is.
func NamespacePatternProblem(list, pattern string) string {
	switch re, isRE := namespaceRegexp(pattern); {
	case strings.TrimSpace(pattern) == "":
		return "empty: write a namespace, a glob of them (e.g. team-*), or a regular expression between slashes (e.g. /^team-[a-z]+$/)"
	case strings.HasPrefix(pattern, "!"):
		return fmt.Sprintf("%q: %s have no deny patterns (Argo CD reads it as a namespace that cannot exist, so it allows nothing): list only the namespaces to allow", pattern, list)
	case isRE && re == nil:
		_, err := regexp.Compile(pattern[1 : len(pattern)-1])
		return fmt.Sprintf("%q is not a regular expression Ferry reads (%v): fix it, or write a glob instead (Go's RE2 syntax: no lookarounds or backreferences)", pattern, err)
	case !isRE:
		if _, err := glob.Compile(pattern); err != nil {
			return fmt.Sprintf("%q is not a valid glob (%v): fix the pattern", pattern, err)
		}
	}
	return ""
}
