package regions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A live Config answers with the cluster regions of the last SetClusters,
// beside the configured ones, for a configured list and for none alike.
func TestLiveClusters(t *testing.T) {
	configured, err := Parse([]byte(twoRegions))
	if err != nil {
		t.Fatal(err)
	}
	for name, base := range map[string]*Config{"configured": configured, "open": nil} {
		t.Run(name, func(t *testing.T) {
			live := NewLive(base)
			if _, ok := live.ByServer("https://10.9.0.1:6443"); ok {
				t.Fatal("a server no region has yet is known")
			}
			refused := live.SetClusters([]Region{
				{Name: "mars", Server: "https://10.9.0.1:6443/", Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"team": "red"}},
				{Name: "us-east-1", Server: "https://10.9.0.2:6443"},
				{Name: "venus", Server: "https://10.9.0.1:6443"},
				{Name: "Bad_Name", Server: "10.9.0.3", Labels: map[string]string{"a b": "x"}},
				{Name: "moon", Server: InClusterServer},
			})
			mars, ok := live.ByServer("https://10.9.0.1:6443")
			if !ok || mars.Name != "mars" || mars.Labels["env"] != "prod" || mars.Annotations["team"] != "red" {
				t.Fatalf("ByServer = %+v, %t", mars, ok)
			}
			if r, ok := live.ForName("mars"); !ok || r.Server != "https://10.9.0.1:6443/" {
				t.Errorf("ForName(mars) = %+v, %t", r, ok)
			}
			if !slicesHave(live.Regions(), "mars") {
				t.Errorf("Regions() lacks mars: %+v", live.Regions())
			}
			wants := map[string]string{
				"venus":    `server: https://10.9.0.1:6443 is region "mars"'s already`,
				"Bad_Name": `is not a valid region name`,
				"moon":     `Argo CD's in-cluster address`,
			}
			if name == "configured" {
				wants["us-east-1"] = `region "us-east-1" exists already`
			}
			for region, want := range wants {
				if !strings.Contains(refused[region], want) {
					t.Errorf("%s refused for %q, want %q", region, refused[region], want)
				}
			}
			if !strings.Contains(refused["Bad_Name"], `label "a b"`) || !strings.Contains(refused["Bad_Name"], "not an http(s) URL") {
				t.Errorf("every problem of a cluster at once: %q", refused["Bad_Name"])
			}
			// Through a snapshot (what a workflow records), the same.
			data, err := json.Marshal(live.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			var snap Snapshot
			if err := json.Unmarshal(data, &snap); err != nil {
				t.Fatal(err)
			}
			back, err := snap.Config()
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := back.ByServer("https://10.9.0.1:6443"); !ok || !reflect.DeepEqual(r, mars) {
				t.Errorf("%s: ByServer after the snapshot = %+v, %t", data, r, ok)
			}
			if name == "configured" {
				if r, _ := back.InClusterRegion(); r.Name != "eu-west-1" {
					t.Errorf("the in-cluster region moved to %q", r.Name)
				}
			}
			// Gone from the Secrets, gone from the regions.
			live.SetClusters(nil)
			if _, ok := live.ByServer("https://10.9.0.1:6443"); ok {
				t.Error("a removed cluster's server is still known")
			}
			if r, ok := live.ForName("mars"); name == "configured" && ok {
				t.Errorf("a removed cluster is still a region: %+v", r)
			}
			if !reflect.DeepEqual(live.Snapshot(), NewLive(base).Snapshot()) || (base != nil && !reflect.DeepEqual(live.Snapshot(), base.Snapshot())) {
				t.Errorf("with no clusters the live config is its base: %+v", live.Snapshot())
			}
		})
	}
}

func slicesHave(list []Region, name string) bool {
	for _, r := range list {
		if r.Name == name {
			return true
		}
	}
	return false
}
