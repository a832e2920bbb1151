package app

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestReadNamesAllProblems: what `ferry app apply` runs names a file's
// unknown, unsupported and mistyped fields together with the wrong values
// of the others, so that one round of fixes is enough.
func TestReadNamesAllProblems(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		fields     []string
	}{
		{"parse and value problems", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: many
spec:
  project: Not_A_Project
  source:
    repoURL: ftp://git.example.com/org/apps.git
    targetRevision: 5
    chart: nginx
    path: /abs
  destination:
    name: mars
  syncPolicy:
    syncOptions: [CreateNamespace=yes]
  pollIntervall: 3m
`, []string{"spec.pollIntervall", "spec.source.targetRevision",
			"spec.project", "spec.source.repoURL", "spec.source.path", "spec.destination.name", "spec.syncPolicy.syncOptions[0]"}},
		{"a ref on a chart and a bad destination", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: multi
spec:
  sources:
  - {repoURL: https://charts.example.com, chart: nginx, ref: chart}
  - {repoURL: https://git.example.com/org/values.git, ref: values}
  destination:
    server: https://remote.example.com
`, []string{"spec.sources[0].ref", "spec.destination.server"}},
		{"a mistyped field is not also missing", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: typed
spec:
  source:
    repoURL: [https://git.example.com/org/apps.git]
  destination: us-east-1
`, []string{"spec.source.repoURL", "spec.destination"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Read([]byte(tc.text), testOptions)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			if a == nil || a.Metadata.Name == "" {
				t.Errorf("Read returned no Application (%v) beside its problems", a)
			}
			var got []string
			for _, fe := range ve.Errors {
				got = append(got, fe.Field)
			}
			for _, f := range tc.fields {
				if !slices.Contains(got, f) {
					t.Errorf("not named: %s\nerror: %v", f, err)
				}
			}
			if len(got) != len(tc.fields) {
				t.Errorf("named %d problems %v, want the %d %v (no field twice)", len(got), got, len(tc.fields), tc.fields)
			}
		})
	}
}

// TestReadOtherKinds: an AppProject or ApplicationSet given to app apply
// is named as what it is, not as an application.
func TestReadOtherKinds(t *testing.T) {
	for kind, says := range map[string]string{
		"AppProject":     "appproject \"team-a\": kind: an AppProject is not an Application: apply it with `ferry project apply -f FILE`",
		"ApplicationSet": "applicationset \"team-a\": kind: ApplicationSet is not supported",
	} {
		_, err := Read([]byte("apiVersion: argoproj.io/v1alpha1\nkind: "+kind+"\nmetadata: {name: team-a}\nspec: {}\n"), testOptions)
		if err == nil || !strings.HasPrefix(err.Error(), says) {
			t.Errorf("%s: err = %v, want it to start %q", kind, err, says)
		}
	}
}

// TestReadValid: a valid file reads as Parse and Validate read it.
func TestReadValid(t *testing.T) {
	a, err := Read([]byte(readFixture(t, "guestbook")), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := loadFixture(t, "guestbook")
	if a.SpecDigest() != b.SpecDigest() {
		t.Errorf("Read and Parse give different specs")
	}
}
