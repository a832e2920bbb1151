package e2etest

import (
	"fmt"
	"strings"
	"testing"
)

// App describes an Application for AppYAML.
type App struct {
	Name, RepoURL, Path, Namespace string
	// Regions are its destinations, each with Namespace.
	Regions []string
	// Automated turns on automated sync with prune and selfHeal.
	Automated bool
	// Poll is spec.pollInterval; empty: 3m.
	Poll string
	// Stages, when set, is spec.syncPolicy.rollout: the regions of each stage.
	Stages [][]string
}

// YAML is the Application file, in Argo CD's format with Ferry's
// destinations and rollout.
func (a App) YAML() string {
	var b strings.Builder
	poll := a.Poll
	if poll == "" {
		poll = "3m"
	}
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n", a.Name)
	fmt.Fprintf(&b, "  pollInterval: %s\n  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n  destinations:\n", poll, a.RepoURL, a.Path)
	for _, r := range a.Regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, a.Namespace)
	}
	b.WriteString("  syncPolicy:\n")
	if a.Automated {
		b.WriteString("    automated: {prune: true, selfHeal: true}\n")
	}
	b.WriteString("    syncOptions: [CreateNamespace=true]\n")
	if len(a.Stages) > 0 {
		b.WriteString("    rollout:\n      stages:\n")
		for _, st := range a.Stages {
			fmt.Fprintf(&b, "        - regions: [%s]\n", strings.Join(st, ", "))
		}
	}
	return b.String()
}

// Apply creates or updates the app with `ferry app apply`.
func (e *Env) Apply(t testing.TB, a App) {
	t.Helper()
	e.MustFerry(t, "app", "apply", "-f", WriteFile(t, a.Name+".yaml", a.YAML()))
}
