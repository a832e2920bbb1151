package regions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const twoRegions = `regions:
  - name: us-east-1
    server: https://10.0.0.1:6443/
    aliases: [prod-east]
    labels: {env: prod}
    annotations: {team: platform}
    project: team-a
  - name: eu-west-1
    server: https://10.0.1.1:6443
    inCluster: true
`

func TestLookups(t *testing.T) {
	c, err := Parse([]byte(twoRegions))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Names(), ","); got != "us-east-1,eu-west-1" || c.Open() {
		t.Fatalf("Names = %s, Open = %t", got, c.Open())
	}
	for _, tc := range []struct {
		what   string
		lookup func(string) (Region, bool)
		key    string
		want   string // "": not found
	}{
		{"name", c.ByName, "us-east-1", "us-east-1"},
		{"unknown name", c.ByName, "mars", ""},
		{"alias as a name", c.ByName, "prod-east", ""},
		{"server", c.ByServer, "https://10.0.0.1:6443", "us-east-1"},
		{"server with slash", c.ByServer, "https://10.0.1.1:6443/", "eu-west-1"},
		{"in-cluster server", c.ByServer, InClusterServer + "/", "eu-west-1"},
		{"unknown server", c.ByServer, "https://10.0.9.9:6443", ""},
		{"alias", c.ByAlias, "prod-east", "us-east-1"},
		{"in-cluster alias", c.ByAlias, InClusterName, "eu-west-1"},
		{"destination name", c.ForName, "prod-east", "us-east-1"},
		{"destination in-cluster", c.ForName, InClusterName, "eu-west-1"},
		{"destination unknown", c.ForName, "mars", ""},
	} {
		r, ok := tc.lookup(tc.key)
		if got := map[bool]string{true: r.Name}[ok]; got != tc.want {
			t.Errorf("%s %q = %q, %t; want %q", tc.what, tc.key, r.Name, ok, tc.want)
		}
	}
	r, _ := c.ByName("us-east-1")
	if r.Project != "team-a" {
		t.Errorf("us-east-1 is scoped to project %q, want team-a", r.Project)
	}
	if r.Labels["env"] != "prod" || r.Annotations["team"] != "platform" || r.InCluster {
		t.Errorf("us-east-1 = %+v", r)
	}
	r.Labels["env"] = "changed"
	if again, _ := c.ByName("us-east-1"); again.Labels["env"] != "prod" {
		t.Error("a lookup's result shares its labels with the Config")
	}
}

// With no configuration at all, the in-cluster destination is the only
// region or the one named in-cluster, as Argo CD's own cluster is.
func TestInClusterDefaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c         *Config
		inCluster string // "": none
	}{
		{"nil: any name, in-cluster is itself", nil, InClusterName},
		{"no flags", must(FromFlags(nil, "")), InClusterName},
		{"in-cluster flag alone", must(FromFlags(nil, "local")), "local"},
		{"the only region", Of("us-east-1"), "us-east-1"},
		{"the one named in-cluster", Of("us-east-1", "in-cluster"), "in-cluster"},
		{"several, none named so", Of("us-east-1", "eu-west-1"), ""},
		{"flag names one", must(FromFlags([]string{"us-east-1", "eu-west-1"}, "eu-west-1")), "eu-west-1"},
	} {
		r, ok := tc.c.InClusterRegion()
		if got := map[bool]string{true: r.Name}[ok]; got != tc.inCluster {
			t.Errorf("%s: in-cluster region = %q, want %q", tc.name, got, tc.inCluster)
		}
		if r, ok := tc.c.ByServer(InClusterServer); ok != (tc.inCluster != "") || r.Name != tc.inCluster {
			t.Errorf("%s: ByServer(in-cluster) = %q, %t", tc.name, r.Name, ok)
		}
	}
	if r, ok := (*Config)(nil).ForName("mars"); !ok || r.Name != "mars" {
		t.Errorf("nil config refuses a region name: %+v", r)
	}
	if _, ok := (*Config)(nil).ForName("Mars_1"); ok {
		t.Error("nil config accepts a name that is no DNS label")
	}
}

// Every problem of a file is named at once.
func TestNewRefuses(t *testing.T) {
	_, err := Parse([]byte(`regions:
  - {name: us-east-1, server: "https://10.0.0.1:6443", aliases: [in-cluster, eu-west-1]}
  - {name: eu-west-1, server: "https://10.0.0.1:6443/", inCluster: true}
  - {name: Bad_Name, server: "10.0.0.3", labels: {"a b": x}}
  - {name: ap-south-1, server: "https://kubernetes.default.svc", inCluster: true}
  - {name: us-east-1, project: Team_A}
`))
	if err == nil {
		t.Fatal("a bad configuration was accepted")
	}
	for _, want := range []string{
		`alias "in-cluster" is Argo CD's in-cluster name`,
		`server https://10.0.0.1:6443/ is also region "us-east-1"'s`,
		`regions[2].name: "Bad_Name" is not a valid region name`,
		`server "10.0.0.3" is not an http(s) URL`,
		`label "a b"`,
		`server https://kubernetes.default.svc is Argo CD's in-cluster address`,
		`inCluster is also set on region "eu-west-1"`,
		`regions[4].name: "us-east-1" is also regions[0]`,
		`alias "eu-west-1" is the name of region "eu-west-1"`,
		`region "us-east-1": project "Team_A" is not a valid AppProject name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := Parse([]byte("regions:\n  - {name: a, sever: https://x}\n")); err == nil || !strings.Contains(err.Error(), "sever") {
		t.Errorf("a misspelt field: %v", err)
	}
	if _, err := Parse([]byte("regions: []\n")); err == nil {
		t.Error("an empty list was accepted")
	}
}

// The shorthand flags and the file agree or the worker does not start.
func TestConfigure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "regions.yaml")
	if err := os.WriteFile(file, []byte(twoRegions), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Configure(file, []string{"eu-west-1", "us-east-1"}, "eu-west-1"); err != nil || c.Names()[0] != "us-east-1" {
		t.Errorf("matching flags: %v", err)
	}
	for _, tc := range []struct {
		known     []string
		inCluster string
		want      string
	}{
		{[]string{"us-east-1"}, "", "are not those of"},
		{nil, "us-east-1", "makes eu-west-1 the in-cluster region"},
	} {
		if _, err := Configure(file, tc.known, tc.inCluster); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Configure(%v, %q) = %v, want an error with %q", tc.known, tc.inCluster, err, tc.want)
		}
	}
	plain := filepath.Join(t.TempDir(), "plain.yaml")
	if err := os.WriteFile(plain, []byte(strings.ReplaceAll(twoRegions, "inCluster: true", "labels: {}")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Configure(plain, nil, "mars"); err == nil || !strings.Contains(err.Error(), "is not a region of") {
		t.Errorf("an in-cluster region the file lacks: %v", err)
	}
	if c, err := Configure(plain, nil, "us-east-1"); err != nil || !must(c, err).list[0].InCluster {
		t.Errorf("the in-cluster flag marks the file's region: %v", err)
	}
	if _, err := FromFlags([]string{"us-east-1"}, "eu-west-1"); err == nil {
		t.Error("an in-cluster region outside --regions was accepted")
	}
	if _, err := Configure(filepath.Join(t.TempDir(), "none.yaml"), nil, ""); err == nil {
		t.Error("a missing file was accepted")
	}
}

func must(c *Config, err error) *Config {
	if err != nil {
		panic(err)
	}
	return c
}

// TestSnapshotRoundTrip: a Config through its Snapshot and JSON maps every
// destination as the Config itself does.
func TestSnapshotRoundTrip(t *testing.T) {
	configured, err := New([]Region{
		{Name: "us-east-1", Server: "https://10.0.0.1:6443", Aliases: []string{"prod-us"}, Labels: map[string]string{"env": "prod"}, Project: "team-a"},
		{Name: "in-cluster"},
	})
	if err != nil {
		t.Fatal(err)
	}
	open, err := FromFlags(nil, "home")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{nil, configured, open, Of("a", "b")} {
		data, err := json.Marshal(c.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		var snap Snapshot
		if err := json.Unmarshal(data, &snap); err != nil {
			t.Fatal(err)
		}
		back, err := snap.Config()
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !reflect.DeepEqual(back.Snapshot(), c.Snapshot()) {
			t.Errorf("%s: came back as %+v", data, back.Snapshot())
		}
		for _, name := range []string{"us-east-1", "prod-us", "in-cluster", "a", "home", "nowhere"} {
			r1, ok1 := c.ForName(name)
			r2, ok2 := back.ForName(name)
			if ok1 != ok2 || !reflect.DeepEqual(r1, r2) {
				t.Errorf("%s: ForName(%q) = %+v %t, was %+v %t", data, name, r2, ok2, r1, ok1)
			}
		}
		r1, ok1 := c.ByServer("https://10.0.0.1:6443")
		r2, ok2 := back.ByServer("https://10.0.0.1:6443")
		i1, iok1 := c.InClusterRegion()
		i2, iok2 := back.InClusterRegion()
		if ok1 != ok2 || !reflect.DeepEqual(r1, r2) || iok1 != iok2 || !reflect.DeepEqual(i1, i2) {
			t.Errorf("%s: ByServer or InClusterRegion differ", data)
		}
	}
}
