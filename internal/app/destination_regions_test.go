package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// A regions configuration maps Argo CD's destination.server URLs and
// cluster names to regions.
func TestDestinationsThroughRegionsConfig(t *testing.T) {
	rc, err := regions.Parse([]byte(`regions:
  - {name: us-east-1, server: "https://10.0.0.1:6443", aliases: [prod-east], inCluster: true}
  - {name: eu-west-1, server: "https://10.0.1.1:6443"}
`))
	if err != nil {
		t.Fatal(err)
	}
	opts := ValidateOptions{Regions: rc}
	a := validApp()
	a.Spec.Destination = nil
	a.Spec.Destinations = []Destination{
		{Server: "https://10.0.1.1:6443/", Namespace: "web"},
		{Name: "prod-east"},
	}
	if err := Validate(a, opts); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := []Target{{Region: "eu-west-1", Namespace: "web"}, {Region: "us-east-1"}}
	if got := a.Destinations(rc); !slices.Equal(got, want) {
		t.Errorf("Destinations = %+v, want %+v", got, want)
	}

	// The same region by its server and by an alias is listed twice.
	a.Spec.Destinations = []Destination{{Server: "https://10.0.0.1:6443"}, {Name: "prod-east"}, {Server: InClusterServer}}
	assertFieldErrors(t, Validate(a, opts), []string{"spec.destinations[1].name", "spec.destinations[2].server"})

	// An unknown server is refused by name, with the servers there are.
	a.Spec.Destinations = []Destination{{Server: "https://10.0.9.9:6443"}, {Name: "mars"}}
	err = Validate(a, opts)
	assertFieldErrors(t, err, []string{"spec.destinations[0].server", "spec.destinations[1].name"})
	for _, s := range []string{`"https://10.0.9.9:6443" is the server of no region (us-east-1: https://10.0.0.1:6443, eu-west-1: https://10.0.1.1:6443)`, `unknown region "mars"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}

	// A project's destinations see the region by its server URL and names.
	p := &AppProject{Spec: ProjectSpec{Destinations: []ProjectDestination{{Server: "https://10.0.1.1:6443", Namespace: "*"}}}}
	if !p.PermitsDestination("eu-west-1", "web", rc) || p.PermitsDestination("us-east-1", "web", rc) {
		t.Error("a project's server pattern does not select the region of that server alone")
	}
	p.Spec.Destinations = []ProjectDestination{{Name: "prod-*", Namespace: "*"}}
	if !p.PermitsDestination("us-east-1", "web", rc) {
		t.Error("a project's name pattern does not match a region's alias")
	}
	a.Spec.Destinations = []Destination{{Server: "https://10.0.1.1:6443"}}
	p.Spec.Destinations = []ProjectDestination{{Server: "https://10.0.1.1:6443", Namespace: "*"}}
	p.Spec.SourceRepos = []string{"*"}
	if err := p.CheckApplication(a, nil); err != nil {
		t.Errorf("the CLI, which knows no regions, refuses a server its project allows: %v", err)
	}
}
