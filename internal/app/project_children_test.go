package app

import (
	"errors"
	"strings"
	"testing"
)

func projectWithChildren(t *testing.T, name, annotation string) *AppProject {
	t.Helper()
	doc := "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: " + name + "\n"
	if annotation != "" {
		doc += "  annotations:\n    ferry.dev/child-projects: \"" + annotation + "\"\n"
	}
	p, err := ParseProject([]byte(doc + "spec:\n  sourceRepos: ['*']\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateProject(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func childOf(project string) *Application {
	return &Application{Metadata: ObjectMeta{Name: "child"}, Spec: Spec{Project: project}}
}

func TestPermitsChildProject(t *testing.T) {
	for _, c := range []struct {
		parent, annotation, child string
		want                      bool
	}{
		{"team-a", "", "team-a", true},
		{"team-a", "", "platform", false},
		{"team-a", "", "", false}, // no spec.project is the default project, which allows everything
		{"team-a", "", "default", false},
		{"team-a", "platform", "platform", true},
		{"team-a", " platform , team-b ", "team-b", true},
		{"team-a", "team-a-*", "team-a-dev", true},
		{"team-a", "team-a-*", "team-b-dev", false},
		{"team-a", "*", "platform", true},
		{"team-a", "default", "", true},
		{DefaultProject, "", "platform", true}, // the built-in default allows everything
	} {
		var p *AppProject
		if c.parent == DefaultProject {
			p = DefaultAppProject()
		} else {
			p = projectWithChildren(t, c.parent, c.annotation)
		}
		if got := p.PermitsChildProject(c.child); got != c.want {
			t.Errorf("project %s (%s %q) permits child project %q = %v, want %v", c.parent, ChildProjectsAnnotation, c.annotation, c.child, got, c.want)
		}
	}
}

func TestCheckChildNamesBothProjectsAndTheRule(t *testing.T) {
	p := projectWithChildren(t, "team-a", "")
	err := p.CheckChild(`app of apps "apps"`, &Application{Metadata: ObjectMeta{Name: "evil"}, Spec: Spec{Project: "platform"}})
	var ce *ChildProjectError
	if !errors.As(err, &ce) {
		t.Fatalf("CheckChild = %v, want a *ChildProjectError", err)
	}
	for _, want := range []string{`child app "evil" is in project "platform"`, `app of apps "apps" is in project "team-a"`, ChildProjectsAnnotation, "nothing of app \"evil\" was created or changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if err := p.CheckChild(`app of apps "apps"`, childOf("team-a")); err != nil {
		t.Errorf("a child of the parent's own project: %v", err)
	}
}

func TestValidateChildProjectsAnnotation(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{" , ", "lists no project"},
		{"platform, !team-b", "deny patterns are not supported"},
		{"team-[a", "not a valid glob"},
	} {
		p, err := ParseProject([]byte("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: team-a\n  annotations:\n    ferry.dev/child-projects: \"" +
			c.value + "\"\nspec:\n  sourceRepos: ['*']\n"))
		if err != nil {
			t.Fatal(err)
		}
		err = ValidateProject(p)
		if err == nil || !strings.Contains(err.Error(), `metadata.annotations["ferry.dev/child-projects"]`) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("annotation %q: err = %v, want the field and %q", c.value, err, c.want)
		}
	}
}
