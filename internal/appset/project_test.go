package appset

import (
	"strings"
	"testing"
)

func TestProjectIsChosenByWhoAppliesTheSet(t *testing.T) {
	set := func(annotation, project string) string {
		doc := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: web\n"
		if annotation != "" {
			doc += "  annotations: {ferry.dev/project: " + annotation + "}\n"
		}
		doc += "spec:\n  goTemplate: true\n  generators: [{list: {elements: [{env: dev}]}}]\n"
		doc += "  template:\n    metadata: {name: 'web-{{.env}}'}\n    spec:\n"
		if project != "" {
			doc += "      project: " + project + "\n"
		}
		return doc + "      source: {repoURL: 'https://git.example.com/web.git', targetRevision: main, path: web}\n      destination: {name: us-east-1, namespace: web}\n"
	}
	for _, c := range []struct{ annotation, project, want string }{
		{"", "team-a", "team-a"},
		{"team-b", "team-a", "team-b"},
		{"team-b", "'{{.env}}'", "team-b"},
		{"", "", "default"},
		// Written by the generators' parameters: not chosen by who
		// applies the set, so it runs under the default project.
		{"", "'{{.env}}'", "default"},
	} {
		s, err := Read([]byte(set(c.annotation, c.project)))
		if err != nil {
			t.Fatalf("annotation %q, project %q: %v", c.annotation, c.project, err)
		}
		if got := s.Project(); got != c.want {
			t.Errorf("annotation %q, project %q: Project() = %q, want %q", c.annotation, c.project, got, c.want)
		}
	}
	_, err := Read([]byte(set("Team_B", "team-a")))
	if err == nil || !strings.Contains(err.Error(), `metadata.annotations["ferry.dev/project"]: "Team_B" is not a project name`) {
		t.Errorf("a bad project annotation: err = %v", err)
	}
}
