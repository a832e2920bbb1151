package app

import (
	"errors"
	"strings"
	"testing"
)

// The cases are Argo CD's (TestAppProject_IsAppNamespacePermitted), with
// "" standing for its app in the controller's namespace, and a few of its
// glob and regexp list matching (util/glob).
func TestPermitsSourceNamespace(t *testing.T) {
	for _, tc := range []struct {
		list []string
		ns   string
		want bool
	}{
		{[]string{"other-ns"}, "", true},
		{[]string{}, "", true},
		{nil, "some-ns", false},
		{[]string{}, "some-ns", false},
		{[]string{"some-ns"}, "some-ns", true},
		{[]string{"some-ns"}, "other-ns", false},
		{[]string{"some-*"}, "some-ns1", true},
		{[]string{"some-*"}, "some-ns2", true},
		{[]string{"some-*"}, "someotherns", false},
		{[]string{"*"}, "anything", true},
		{[]string{"team-?"}, "team-a", true},
		{[]string{"team-{a,b}"}, "team-b", true},
		{[]string{"team-{a,b}"}, "team-c", false},
		{[]string{"/^team-[a-z]+$/"}, "team-abc", true},
		{[]string{"/^team-[a-z]+$/"}, "team-1", false},
		{[]string{"/team/"}, "my-team-ns", true}, // unanchored, as Argo CD matches
		{[]string{"other", "/^x-/"}, "x-1", true},
	} {
		p := &AppProject{Spec: ProjectSpec{SourceNamespaces: tc.list}}
		if got := p.PermitsSourceNamespace(tc.ns); got != tc.want {
			t.Errorf("sourceNamespaces %q, namespace %q: permitted = %t, want %t", tc.list, tc.ns, got, tc.want)
		}
	}
}

func TestCheckSourceNamespace(t *testing.T) {
	p := mustProject(t, "  sourceRepos: ['*']\n  sourceNamespaces: [team-a]\n")
	if err := p.CheckSourceNamespace("web", "team-a"); err != nil {
		t.Errorf("team-a refused: %v", err)
	}
	err := p.CheckSourceNamespace("web", "team-b")
	var se *SourceNamespaceError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *SourceNamespaceError", err)
	}
	if want := "application 'web' in namespace 'team-b' is not permitted to use project 'team-a'"; err.Error() != want {
		t.Errorf("error = %q, want Argo CD's %q", err, want)
	}
	if !strings.Contains(se.Fix(), "spec.sourceNamespaces of project \"team-a\"") {
		t.Errorf("Fix() = %q", se.Fix())
	}
}

func TestValidateSourceNamespaces(t *testing.T) {
	p, err := ParseProject([]byte(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ['*']
  sourceNamespaces: ["", "!team-b", "/(?=x)/", "team-[", "team-*", "/^ok$/"]
`))
	if err != nil {
		t.Fatal(err)
	}
	err = ValidateProject(p)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"spec.sourceNamespaces[0]: empty",
		`spec.sourceNamespaces[1]: "!team-b": sourceNamespaces have no deny patterns`,
		`spec.sourceNamespaces[2]: "/(?=x)/" is not a regular expression Ferry reads`,
		`spec.sourceNamespaces[3]: "team-[" is not a valid glob`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	for _, ok := range []string{"[4]", "[5]"} {
		if strings.Contains(err.Error(), "spec.sourceNamespaces"+ok) {
			t.Errorf("a good entry %s was refused: %v", ok, err)
		}
	}
}
