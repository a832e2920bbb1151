package app

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// scopedRegions are Argo CD's test clusters as regions; those named in
// scoped belong to project team-a, some-server to team-b unless scoped.
func scopedRegions(t *testing.T, scoped ...string) *regions.Config {
	t.Helper()
	list := []regions.Region{
		{Name: "team1-east", Server: "https://team1-something.com"},
		{Name: "my-cluster", Server: "https://my-cluster.123.com"},
		{Name: "other", Server: "https://some-other-cluster.example.com"},
		{Name: "some-server", Project: "team-b"},
		{Name: "some-other-server"},
	}
	for i := range list {
		if slices.Contains(scoped, list[i].Name) {
			list[i].Project = "team-a"
		}
	}
	rc, err := regions.New(list)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// The cases are Argo CD's
// (TestAppProject_IsDestinationPermitted_PermitOnlyProjectScopedClusters),
// its clusters as regions: project team-a with
// permitOnlyProjectScopedClusters, and the regions of the case's clusters
// scoped to it.
func TestPermitOnlyProjectScopedClusters(t *testing.T) {
	for _, tc := range []struct {
		dest   string // the project's destination entry
		scoped []string
		region string
		want   bool
	}{
		{"{server: 'https://team1-*', namespace: default}", nil, "team1-east", false},
		{"{server: 'https://my-cluster.123.com', namespace: default}", []string{"my-cluster"}, "my-cluster", true},
		{"{server: 'https://my-cluster.123.com', namespace: default}", []string{"my-cluster"}, "other", false},
		{"{name: some-server, namespace: default}", nil, "some-server", false},
		{"{name: some-other-server, namespace: default}", []string{"some-other-server"}, "some-other-server", true},
		{"{name: some-server, namespace: default}", []string{"some-server"}, "some-other-server", false},
	} {
		p := mustProject(t, "  sourceRepos: ['*']\n  permitOnlyProjectScopedClusters: true\n  destinations: ["+tc.dest+"]\n")
		if got := p.PermitsDestination(tc.region, "default", scopedRegions(t, tc.scoped...)); got != tc.want {
			t.Errorf("destinations [%s], scoped %v, region %s: permitted = %t, want %t", tc.dest, tc.scoped, tc.region, got, tc.want)
		}
	}
}

// A region scoped to a project is an implicit destination of it, every
// namespace, as Argo CD adds one for each cluster of the project; a deny
// entry still excludes it, and other projects gain nothing.
func TestScopedRegionIsImplicitDestination(t *testing.T) {
	rc := scopedRegions(t, "my-cluster", "some-other-server")
	p := mustProject(t, "  sourceRepos: ['*']\n")
	if !p.PermitsDestination("my-cluster", "anything", rc) || !p.PermitsDestination("some-other-server", "kube-system", rc) {
		t.Error("a region scoped to team-a is not a destination of team-a")
	}
	if p.PermitsDestination("some-server", "default", rc) || p.PermitsDestination("other", "default", rc) {
		t.Error("a region not scoped to team-a is a destination of it")
	}
	if p.PermitsDestination("my-cluster", "x", nil) {
		t.Error("without a regions configuration a region is known to be scoped")
	}
	deny := mustProject(t, "  sourceRepos: ['*']\n  destinations: [{name: '*', namespace: '!kube-system'}]\n")
	if deny.PermitsDestination("my-cluster", "kube-system", rc) {
		t.Error("a deny entry did not exclude a namespace of a scoped region")
	}
}

// The errors name the project, the region and the fix; Argo CD's condition
// keeps its words.
func TestPermitOnlyProjectScopedClustersErrors(t *testing.T) {
	rc := scopedRegions(t, "my-cluster", "some-other-server")
	p := mustProject(t, "  sourceRepos: ['*']\n  permitOnlyProjectScopedClusters: true\n  destinations: [{name: '*', namespace: '*'}]\n")
	a := &Application{Metadata: ObjectMeta{Name: "web"}, Spec: Spec{Project: "team-a",
		Source:       Source{RepoURL: "https://git.example.com/apps.git"},
		Destinations: []Destination{{Name: "my-cluster", Namespace: "web"}, {Name: "other", Namespace: "web"}}}}
	err := p.CheckApplication(a, rc)
	var pe *ProjectError
	if !errors.As(err, &pe) || len(pe.Problems) != 1 {
		t.Fatalf("err = %v, want a ProjectError with one problem", err)
	}
	for _, want := range []string{`project "team-a" does not allow destination other/web (permitOnlyProjectScopedClusters`,
		`region other is not scoped to project "team-a"`, "set project: team-a on region other in the regions configuration",
		"or remove permitOnlyProjectScopedClusters from the project"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if err := p.CheckApplication(a, nil); err != nil {
		t.Errorf("without the regions configuration (the CLI) the rule was judged: %v", err)
	}
	conds := p.PermissionConditions(nil, a.Spec.Destinations, rc)
	if len(conds) != 1 || conds[0] != "application destination server 'other' and namespace 'web' do not match any of the allowed destinations in project 'team-a'" {
		t.Errorf("conditions = %q", conds)
	}
	cm := PlacedObject{Key: ResourceKey{Kind: "ConfigMap", Namespace: "web", Name: "c"}, Namespaced: true, Known: true}
	if err := p.CheckObjects("web", "my-cluster", rc, []PlacedObject{cm}); err != nil {
		t.Errorf("an object in a scoped region was refused: %v", err)
	}
	err = p.CheckObjects("web", "other", rc, []PlacedObject{cm})
	var oe *ObjectsError
	if !errors.As(err, &oe) || oe.Violations[0].Rule != "permitOnlyProjectScopedClusters" || !strings.Contains(err.Error(), "set project: team-a on region other") {
		t.Errorf("err = %v, want the object refused by permitOnlyProjectScopedClusters", err)
	}
	if got := p.Prohibits("other", rc, cm); !strings.Contains(got, "(permitOnlyProjectScopedClusters)") {
		t.Errorf("Prohibits = %q", got)
	}
}

func TestIsBuiltIn(t *testing.T) {
	if !DefaultAppProject().IsBuiltIn() {
		t.Error("the built-in default project is not built in")
	}
	locked, err := ParseProject([]byte("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: default}\nspec:\n  sourceRepos: ['*']\n  destinations: [{name: '*', namespace: team-a}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateProject(locked); err != nil {
		t.Fatalf("an AppProject named default was refused: %v", err)
	}
	if locked.IsBuiltIn() {
		t.Error("an applied default project that allows less is taken for the built-in one")
	}
	if locked.PermitsDestination("us-east-1", "team-b", nil) || !locked.PermitsDestination("us-east-1", "team-a", nil) {
		t.Error("an applied default project does not decide the destinations")
	}
	if locked.PermitsChildProject("team-x") || locked.RepoCheck("web") == nil {
		t.Error("an applied default project allows what the built-in one does")
	}
	if !DefaultAppProject().PermitsChildProject("team-x") || DefaultAppProject().RepoCheck("web") != nil {
		t.Error("the built-in default project allows less than everything")
	}
	team := mustProject(t, "  sourceRepos: ['*']\n  destinations: [{name: '*', server: '*', namespace: '*'}]\n  clusterResourceWhitelist: [{group: '*', kind: '*'}]\n")
	if team.IsBuiltIn() {
		t.Error("a project of another name is taken for the built-in default")
	}
}
