package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustProject(t *testing.T, spec string) *AppProject {
	t.Helper()
	p, err := ParseProject([]byte("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: team-a\nspec:\n" + spec))
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateProject(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseProjectRefusals(t *testing.T) {
	input := `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-a
spec:
  sourceRepo: [x]
  syncWindows: [{kind: deny, schedule: "* * * * *", duration: 1h, applications: ["*"], andOperator: true}]
  destinations:
  - namespace: 1
  clusterResourceWhitelist: [{group: "*", kind: "*", extra: x}]
  roles: []
`
	_, err := ParseProject([]byte(input))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a ValidationError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`appproject "team-a": `,
		`spec.sourceRepo: unknown field: did you mean "sourceRepos"?`,
		"andOperator: matching a window's applications, namespaces and clusters all together is not supported yet",
		"spec.destinations[0].namespace: expected a string",
		"spec.clusterResourceWhitelist[0].extra: unknown field",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "spec.roles") {
		t.Errorf("an empty roles list asks for nothing, yet it was refused: %s", msg)
	}

	_, err = Parse([]byte(input))
	if err == nil || !strings.HasPrefix(err.Error(), `appproject "team-a": kind:`) || !strings.Contains(err.Error(), "ferry project apply") {
		t.Errorf("Parse(AppProject) = %v, want an appproject error pointing at ferry project apply", err)
	}
	if _, err := ParseProject([]byte(minimalYAML)); err == nil || !strings.HasPrefix(err.Error(), `application "web": kind: found Application`) || !strings.Contains(err.Error(), "not an AppProject") {
		t.Errorf("ParseProject(Application) = %v", err)
	}
	if _, err := ParseProject([]byte("")); !errors.Is(err, ErrNotOneProject) {
		t.Errorf("ParseProject(empty) = %v, want ErrNotOneProject", err)
	}
}

func TestValidateProject(t *testing.T) {
	p, err := ParseProject([]byte(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  finalizers: [example.com/x]
spec:
  sourceRepos: ["", "https://h/[x"]
  destinations: [{namespace: a}]
  namespaceResourceBlacklist: [{group: ""}]
`))
	if err != nil {
		t.Fatal(err)
	}
	err = ValidateProject(p)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"metadata.finalizers[0]",
		"spec.sourceRepos[0]: empty",
		"spec.sourceRepos[1]",
		"spec.destinations[0].name: required",
		"spec.namespaceResourceBlacklist[0].kind: required",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// An AppProject named default is accepted: it replaces the built-in
	// default project, as Argo CD lets teams lock it down.
	if strings.Contains(err.Error(), "metadata.name") {
		t.Errorf("the name default was refused: %v", err)
	}
}

// The cases follow Argo CD's own tests of AppProject matching.
func TestProjectPermitsRepo(t *testing.T) {
	tests := []struct {
		repos []string
		url   string
		want  bool
	}{
		{[]string{"*"}, "https://github.com/argoproj/argo-cd.git", true},
		{[]string{"https://github.com/argoproj/argo-cd"}, "https://GitHub.com/argoproj/argo-cd.git", true},
		{[]string{"https://github.com/argoproj/*"}, "https://github.com/argoproj/argo-cd", true},
		{[]string{"https://github.com/argoproj/*"}, "https://github.com/argoproj/sub/argo-cd", false},
		{[]string{"https://github.com/argoproj/**"}, "https://github.com/argoproj/sub/argo-cd", true},
		{[]string{"https://github.com/*/*"}, "https://gitlab.com/argoproj/argo-cd", false},
		{[]string{"git@github.com:argoproj/*"}, "ssh://git@github.com/argoproj/argo-cd.git", true},
		{[]string{"git@github.com:aws-containers/ecsdemo-crystal.git"}, "git@github.com:aws-containers/ecsdemo-crystal.git", true},
		{[]string{"*", "!https://github.com/argoproj/secret"}, "https://github.com/argoproj/secret.git", false},
		{[]string{"*", "!https://github.com/argoproj/secret"}, "https://github.com/argoproj/argo-cd", true},
		// As Argo CD's code has it (its docs say otherwise): a deny pattern
		// matches what it does not deny, so alone it allows the rest.
		{[]string{"!https://github.com/argoproj/secret"}, "https://github.com/argoproj/argo-cd", true},
		{[]string{"!https://github.com/argoproj/secret"}, "https://github.com/argoproj/secret", false},
		{[]string{"!https://github.com/argoproj/secret", "*"}, "https://github.com/argoproj/secret", false},
		{nil, "https://github.com/argoproj/argo-cd", false},
	}
	for _, tt := range tests {
		p := &AppProject{Spec: ProjectSpec{SourceRepos: tt.repos}}
		if got := p.PermitsRepo(tt.url); got != tt.want {
			t.Errorf("sourceRepos %q, PermitsRepo(%s) = %t, want %t", tt.repos, tt.url, got, tt.want)
		}
	}
}

func TestProjectPermitsDestination(t *testing.T) {
	dest := func(name, server, ns string) ProjectDestination {
		return ProjectDestination{Name: name, Server: server, Namespace: ns}
	}
	tests := []struct {
		dests             []ProjectDestination
		region, namespace string
		want              bool
	}{
		{[]ProjectDestination{dest("us-east-1", "", "team-a")}, "us-east-1", "team-a", true},
		{[]ProjectDestination{dest("us-east-1", "", "team-a")}, "us-east-1", "kube-system", false},
		{[]ProjectDestination{dest("us-east-1", "", "team-a")}, "eu-west-1", "team-a", false},
		{[]ProjectDestination{dest("us-*", "", "team-*")}, "us-east-1", "team-abc", true},
		{[]ProjectDestination{dest("", "*", "*")}, "ap-south-1", "anything", true},
		{[]ProjectDestination{dest("", "*", "team-a")}, "ap-south-1", "", false},
		// The in-cluster server names the in-cluster region only.
		{[]ProjectDestination{dest("", InClusterServer, "infra")}, "us-east-1", "infra", true},
		{[]ProjectDestination{dest("", InClusterServer, "infra")}, "eu-west-1", "infra", false},
		{[]ProjectDestination{dest("in-cluster", "", "infra")}, "us-east-1", "infra", true},
		{[]ProjectDestination{dest("", "https://api.other:6443", "*")}, "eu-west-1", "x", false},
		// Negation: a deny entry that excludes the destination wins.
		{[]ProjectDestination{dest("*", "", "*"), dest("*", "", "!kube-system")}, "us-east-1", "kube-system", false},
		{[]ProjectDestination{dest("*", "", "*"), dest("*", "", "!kube-system")}, "us-east-1", "team-a", true},
		{[]ProjectDestination{dest("*", "", "*"), dest("!eu-*", "", "*")}, "eu-west-1", "team-a", false},
		{[]ProjectDestination{dest("*", "", "*"), dest("!eu-*", "", "*")}, "us-east-1", "team-a", true},
		{[]ProjectDestination{dest("", "*", "*"), dest("", "!"+InClusterServer, "*")}, "us-east-1", "a", false},
		{[]ProjectDestination{dest("", "*", "*"), dest("", "!"+InClusterServer, "*")}, "eu-west-1", "a", true},
		{nil, "us-east-1", "team-a", false},
	}
	for _, tt := range tests {
		p := &AppProject{Spec: ProjectSpec{Destinations: tt.dests}}
		if got := p.PermitsDestination(tt.region, tt.namespace, flagRegions(nil, "us-east-1")); got != tt.want {
			t.Errorf("destinations %+v, PermitsDestination(%s, %q) = %t, want %t", tt.dests, tt.region, tt.namespace, got, tt.want)
		}
	}
}

func TestProjectPermitsKind(t *testing.T) {
	all := []GroupKind{{Group: "*", Kind: "*"}}
	crb := GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}
	tests := []struct {
		name        string
		spec        ProjectSpec
		group, kind string
		namespaced  bool
		want        bool
		rule        string
	}{
		{"empty cluster whitelist allows no cluster-scoped kind", ProjectSpec{}, crb.Group, crb.Kind, false, false, "clusterResourceWhitelist"},
		{"left-out namespace whitelist allows every namespaced kind", ProjectSpec{}, "apps", "Deployment", true, true, ""},
		{"explicit empty namespace whitelist allows none", ProjectSpec{NamespaceResourceWhitelist: []GroupKind{}}, "apps", "Deployment", true, false, "namespaceResourceWhitelist"},
		{"cluster whitelist *", ProjectSpec{ClusterResourceWhitelist: all}, crb.Group, crb.Kind, false, true, ""},
		{"blacklist beats whitelist", ProjectSpec{ClusterResourceWhitelist: all, ClusterResourceBlacklist: []GroupKind{crb}}, crb.Group, crb.Kind, false, false, "clusterResourceBlacklist"},
		{"blacklist leaves others", ProjectSpec{ClusterResourceWhitelist: all, ClusterResourceBlacklist: []GroupKind{crb}}, "", "Namespace", false, true, ""},
		{"namespace blacklist", ProjectSpec{NamespaceResourceBlacklist: []GroupKind{{Group: "", Kind: "ResourceQuota"}}}, "", "ResourceQuota", true, false, "namespaceResourceBlacklist"},
		{"namespace whitelist by group", ProjectSpec{NamespaceResourceWhitelist: []GroupKind{{Group: "argoproj.io", Kind: "Application"}}}, "apps", "Deployment", true, false, "namespaceResourceWhitelist"},
		{"kind glob", ProjectSpec{NamespaceResourceWhitelist: []GroupKind{{Group: "kafka.strimzi.io", Kind: "Kafka*"}}}, "kafka.strimzi.io", "KafkaTopic", true, true, ""},
		{"core group is empty, not *", ProjectSpec{NamespaceResourceWhitelist: []GroupKind{{Group: "", Kind: "*"}}}, "apps", "Deployment", true, false, "namespaceResourceWhitelist"},
		{"namespaced lists do not cover cluster scope", ProjectSpec{NamespaceResourceWhitelist: all}, "", "Namespace", false, false, "clusterResourceWhitelist"},
	}
	for _, tt := range tests {
		p := &AppProject{Spec: tt.spec}
		if got := p.PermitsKind(tt.group, tt.kind, tt.namespaced); got != tt.want {
			t.Errorf("%s: PermitsKind = %t, want %t", tt.name, got, tt.want)
		}
		if got := p.KindRule(tt.group, tt.kind, tt.namespaced); got != tt.rule {
			t.Errorf("%s: KindRule = %q, want %q", tt.name, got, tt.rule)
		}
	}
}

func TestProjectNamespaceWhitelistSurvivesJSON(t *testing.T) {
	for _, spec := range []string{"  sourceRepos: ['*']\n", "  sourceRepos: ['*']\n  namespaceResourceWhitelist: []\n"} {
		p := mustProject(t, spec)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back AppProject
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if (p.Spec.NamespaceResourceWhitelist == nil) != (back.Spec.NamespaceResourceWhitelist == nil) {
			t.Errorf("%q: whitelist nil = %t before JSON, %t after", spec, p.Spec.NamespaceResourceWhitelist == nil, back.Spec.NamespaceResourceWhitelist == nil)
		}
		if p.Digest() != back.Digest() {
			t.Errorf("digest changed through JSON")
		}
	}
}

func TestCheckApplication(t *testing.T) {
	p := mustProject(t, `  sourceRepos: [https://git.example.com/org/apps.git]
  destinations: [{name: us-east-1, namespace: team-a}]
`)
	a, err := Parse([]byte(minimalYAML))
	if err != nil {
		t.Fatal(err)
	}
	a.Spec.Destination.Namespace = "team-a"
	if err := p.CheckApplication(a, nil); err != nil {
		t.Errorf("allowed app refused: %v", err)
	}
	a.Spec.Source.RepoURL = "https://git.example.com/other/x.git"
	a.Spec.Destination = nil
	a.Spec.Destinations = []Destination{{Name: "us-east-1", Namespace: "team-a"}, {Name: "eu-west-1", Namespace: "kube-system"}}
	err = p.CheckApplication(a, nil)
	var pe *ProjectError
	if !errors.As(err, &pe) || len(pe.Problems) != 2 {
		t.Fatalf("err = %v, want a ProjectError with 2 problems", err)
	}
	for _, want := range []string{`app "web": project "team-a" does not allow source repository https://git.example.com/other/x.git`, "destination eu-west-1/kube-system"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	d := DefaultAppProject()
	if err := d.CheckApplication(a, nil); err != nil {
		t.Errorf("default project refused: %v", err)
	}
	if !d.PermitsKind("rbac.authorization.k8s.io", "ClusterRoleBinding", false) || !d.PermitsKind("apps", "Deployment", true) {
		t.Error("default project refuses a kind")
	}
}

func TestCheckObjects(t *testing.T) {
	p := mustProject(t, `  sourceRepos: ['*']
  destinations: [{name: us-east-1, namespace: team-a}]
  namespaceResourceBlacklist: [{group: "", kind: ResourceQuota}]
`)
	cm := PlacedObject{Key: ResourceKey{Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}, Namespaced: true, Known: true}
	if err := p.CheckObjects("web", "us-east-1", nil, []PlacedObject{cm}); err != nil {
		t.Fatalf("allowed object refused: %v", err)
	}
	objs := []PlacedObject{
		cm,
		{Key: ResourceKey{Kind: "ConfigMap", Namespace: "kube-system", Name: "x"}, Namespaced: true, Known: true},
		{Key: ResourceKey{Kind: "ResourceQuota", Namespace: "team-a", Name: "q"}, Namespaced: true, Known: true},
		{Key: ResourceKey{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}, Known: true},
		{Key: ResourceKey{Group: "example.com", Kind: "Widget", Namespace: "team-a", Name: "w"}},
	}
	err := p.CheckObjects("web", "us-east-1", nil, objs)
	var oe *ObjectsError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want an ObjectsError", err)
	}
	var rules []string
	for _, v := range oe.Violations {
		rules = append(rules, v.Rule)
	}
	want := []string{"destinations", "namespaceResourceBlacklist", "clusterResourceWhitelist", "clusterResourceWhitelist/namespaceResourceWhitelist"}
	if strings.Join(rules, ",") != strings.Join(want, ",") {
		t.Errorf("rules = %v, want %v", rules, want)
	}
	for _, s := range []string{`app "web": project "team-a" does not allow ConfigMap kube-system/x: namespace kube-system of region us-east-1 is not a destination (destinations)`,
		"ClusterRole.rbac.authorization.k8s.io admin: cluster-scoped kind ClusterRole is not allowed", "in region us-east-1: nothing of this sync was applied there"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if err := p.CheckObjects("web", "eu-west-1", nil, []PlacedObject{cm}); err == nil {
		t.Error("an object in a region the project does not allow was accepted")
	}
}

func TestParseProjectRefusesResourceNames(t *testing.T) {
	_, err := ParseProject([]byte("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p}\nspec:\n  clusterResourceWhitelist: [{group: '', kind: Namespace, name: 'team-*'}]\n"))
	if err == nil || !strings.Contains(err.Error(), "spec.clusterResourceWhitelist[0].name: matching resources by name is not supported yet") {
		t.Errorf("err = %v", err)
	}
}
