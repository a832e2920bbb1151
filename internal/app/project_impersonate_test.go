package app

import (
	"errors"
	"strings"
	"testing"
)

func TestServiceAccountFor(t *testing.T) {
	p := mustProject(t, `  sourceRepos: ['*']
  destinations: [{name: '*', namespace: '*'}]
  destinationServiceAccounts:
  - {server: https://kubernetes.default.svc, namespace: kube-system, defaultServiceAccount: ops:admin}
  - {name: eu-*, namespace: team-*, defaultServiceAccount: deployer}
  - {server: '*', namespace: team-a, defaultServiceAccount: team-a-sync}
  - {server: '*', namespace: '*', defaultServiceAccount: ferry:fallback}
`)
	for _, tc := range []struct{ region, namespace, want string }{
		{"eu-west-1", "team-a", "system:serviceaccount:team-a:deployer"}, // first match wins
		{"us-east-1", "team-a", "system:serviceaccount:team-a:team-a-sync"},
		{"us-east-1", "team-b", "system:serviceaccount:ferry:fallback"},
		{"eu-west-1", "other", "system:serviceaccount:ferry:fallback"},
		{"local", "kube-system", "system:serviceaccount:ops:admin"}, // the in-cluster region by its address
		{"us-east-1", "kube-system", "system:serviceaccount:ferry:fallback"},
	} {
		got, err := p.ServiceAccountFor("web", tc.region, tc.namespace, flagRegions(nil, "local"), false)
		if err != nil || got != tc.want {
			t.Errorf("ServiceAccountFor(%s/%s) = %q, %v; want %q", tc.region, tc.namespace, got, err, tc.want)
		}
	}
}

func TestServiceAccountForNoMatch(t *testing.T) {
	p := mustProject(t, `  sourceRepos: ['*']
  destinations: [{name: '*', namespace: '*'}]
  destinationServiceAccounts:
  - {name: us-east-1, namespace: team-a, defaultServiceAccount: deployer}
`)
	_, err := p.ServiceAccountFor("web", "us-east-1", "team-b", nil, false)
	var ie *ImpersonationError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an ImpersonationError", err)
	}
	for _, want := range []string{`app "web"`, `project "team-a"`, "us-east-1/team-b", "no destinationServiceAccounts entry matches"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}

	// Without entries the worker writes as itself, unless it requires
	// impersonation.
	none := mustProject(t, "  sourceRepos: ['*']\n  destinations: [{name: '*', namespace: '*'}]\n")
	if got, err := none.ServiceAccountFor("web", "us-east-1", "team-a", nil, false); got != "" || err != nil {
		t.Errorf("no entries, not required: %q, %v; want the worker's own identity", got, err)
	}
	for _, proj := range []*AppProject{none, DefaultAppProject()} {
		_, err := proj.ServiceAccountFor("web", "us-east-1", "team-a", nil, true)
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "--require-impersonation") {
			t.Errorf("project %s, required: err = %v, want an ImpersonationError naming --require-impersonation", proj.Metadata.Name, err)
		}
	}

	// An unqualified name needs a destination namespace.
	anyNS := mustProject(t, `  sourceRepos: ['*']
  destinations: [{name: '*', namespace: '*'}]
  destinationServiceAccounts: [{server: '*', namespace: '*', defaultServiceAccount: deployer}]
`)
	if _, err := anyNS.ServiceAccountFor("web", "us-east-1", "", nil, false); err == nil || !strings.Contains(err.Error(), "NAMESPACE:deployer") {
		t.Errorf("no destination namespace: err = %v, want one asking for NAMESPACE:deployer", err)
	}
}

func TestValidateServiceAccounts(t *testing.T) {
	p, err := ParseProject([]byte(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ['*']
  destinationServiceAccounts:
  - {namespace: team-a, defaultServiceAccount: deployer}
  - {server: '*', namespace: '!team-b', defaultServiceAccount: deployer}
  - {server: '*', namespace: team-a, defaultServiceAccount: 'team-*'}
  - {server: '*', namespace: team-a, defaultServiceAccount: 'Team_A:x'}
  - {server: '*', namespace: team-a}
  - {server: '*', namespace: '[', defaultServiceAccount: ok}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = ValidateProject(p)
	if err == nil {
		t.Fatal("ValidateProject accepted bad destinationServiceAccounts")
	}
	for _, want := range []string{
		"spec.destinationServiceAccounts[0].server: required",
		"spec.destinationServiceAccounts[1].namespace: \"!team-b\": destinationServiceAccounts know no '!' negation",
		"spec.destinationServiceAccounts[2].defaultServiceAccount: \"team-*\" holds one of",
		"spec.destinationServiceAccounts[3].defaultServiceAccount: \"Team_A:x\": namespace \"Team_A\" is not valid",
		"spec.destinationServiceAccounts[4].defaultServiceAccount: required",
		"spec.destinationServiceAccounts[5].namespace: \"[\" is not a valid glob",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
