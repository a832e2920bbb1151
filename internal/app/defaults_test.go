package app

import (
	"slices"
	"testing"
	"time"
)

func TestPollInterval(t *testing.T) {
	tests := []struct {
		spec string
		want time.Duration
	}{
		{"", DefaultPollInterval},
		{"30s", 30 * time.Second},
		{"1h", time.Hour},
		{"100ms", MinPollInterval}, // Validate refuses it; the accessor clamps
		{"soon", DefaultPollInterval},
	}
	for _, tt := range tests {
		a := &Application{Spec: Spec{PollInterval: tt.spec}}
		if got := a.PollInterval(); got != tt.want {
			t.Errorf("PollInterval(%q) = %s, want %s", tt.spec, got, tt.want)
		}
	}
}

func TestRevision(t *testing.T) {
	if got := (&Source{}).Revision(); got != "HEAD" {
		t.Errorf("empty targetRevision = %q, want HEAD", got)
	}
	if got := (&Source{TargetRevision: "v1"}).Revision(); got != "v1" {
		t.Errorf("Revision = %q, want v1", got)
	}
}

func TestDestinations(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []Target
	}{
		{"name", Spec{Destination: &Destination{Name: "eu-west-1", Namespace: "web"}},
			[]Target{{Region: "eu-west-1", Namespace: "web"}}},
		{"in-cluster server", Spec{Destination: &Destination{Server: InClusterServer, Namespace: "web"}},
			[]Target{{Region: "us-east-1", Namespace: "web"}}},
		{"in-cluster server with slash", Spec{Destination: &Destination{Server: InClusterServer + "/"}},
			[]Target{{Region: "us-east-1"}}},
		{"in-cluster name", Spec{Destination: &Destination{Name: InClusterName}},
			[]Target{{Region: "us-east-1"}}},
		{"fan-out keeps order", Spec{Destinations: []Destination{{Name: "ap-south-1"}, {Name: "eu-west-1", Namespace: "x"}}},
			[]Target{{Region: "ap-south-1"}, {Region: "eu-west-1", Namespace: "x"}}},
		{"none", Spec{}, []Target{}},
	}
	for _, tt := range tests {
		a := &Application{Spec: tt.spec}
		got := a.Destinations(flagRegions(nil, "us-east-1"))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Destinations = %+v, want %+v", tt.name, got, tt.want)
		}
		if regions := a.Regions(flagRegions(nil, "us-east-1")); len(regions) != len(tt.want) {
			t.Errorf("%s: Regions = %v", tt.name, regions)
		}
	}
}

func TestAutomatedSync(t *testing.T) {
	off := false
	on := true
	tests := []struct {
		name string
		sp   *SyncPolicy
		want bool
	}{
		{"no policy", nil, false},
		{"no automated", &SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}}, false},
		{"automated: {}", &SyncPolicy{Automated: &Automated{}}, true},
		{"enabled: true", &SyncPolicy{Automated: &Automated{Enabled: &on, Prune: true}}, true},
		{"enabled: false", &SyncPolicy{Automated: &Automated{Enabled: &off, Prune: true}}, false},
	}
	for _, tt := range tests {
		a := &Application{Spec: Spec{SyncPolicy: tt.sp}}
		if got := a.AutomatedSync(); got != tt.want {
			t.Errorf("%s: AutomatedSync = %t, want %t", tt.name, got, tt.want)
		}
		if a.AutoPrune() && !tt.want {
			t.Errorf("%s: AutoPrune without automated sync", tt.name)
		}
	}
}

func TestSpecDigest(t *testing.T) {
	a, _ := loadFixture(t, "fanout")
	b, _ := loadFixture(t, "fanout")
	if a == nil || b == nil {
		t.Fatal("fanout fixture did not parse")
	}
	d := a.SpecDigest()
	if len(d) != 16 || d != b.SpecDigest() {
		t.Fatalf("digest %q not stable (%q)", d, b.SpecDigest())
	}
	b.Metadata.Labels = map[string]string{"other": "label"}
	if b.SpecDigest() != d {
		t.Error("metadata changed the spec digest")
	}
	b.Spec.Source.TargetRevision = "v1.4.3"
	if b.SpecDigest() == d {
		t.Error("a new targetRevision kept the digest")
	}
}

func TestJitter(t *testing.T) {
	interval := 180 * time.Second
	seen := map[time.Duration]bool{}
	for _, name := range []string{"guestbook", "shop", "helm-guestbook", "a", "b", "c"} {
		j := Jitter(name, interval)
		if j < 0 || j > interval/10 {
			t.Errorf("Jitter(%q) = %s, outside [0, %s]", name, j, interval/10)
		}
		if j != Jitter(name, interval) {
			t.Errorf("Jitter(%q) not deterministic", name)
		}
		seen[j] = true
	}
	if len(seen) < 4 {
		t.Errorf("jitter barely spreads apps: %v", seen)
	}
	if Jitter("x", 0) != 0 || Jitter("x", -time.Second) != 0 {
		t.Error("jitter of a non-positive interval is not 0")
	}
	if j := Jitter("x", 5*time.Nanosecond); j != 0 {
		t.Errorf("Jitter over 5ns = %s, want 0 (10%% rounds down)", j)
	}
}

func TestCascadeDelete(t *testing.T) {
	for fin, want := range map[string]bool{
		ResourcesFinalizer:                 true,
		ResourcesFinalizer + "/background": true,
		"example.com/other":                false,
	} {
		a := &Application{Metadata: ObjectMeta{Finalizers: []string{fin}}}
		if got := a.CascadeDelete(); got != want {
			t.Errorf("CascadeDelete with %q = %t, want %t", fin, got, want)
		}
	}
}
