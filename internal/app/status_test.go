package app

import (
	"testing"
	"time"
)

// TestHistoryLimit: spec.revisionHistoryLimit is the history's length, as
// in Argo CD; 0 keeps none, unset keeps 10.
func TestHistoryLimit(t *testing.T) {
	three, zero := int64(3), int64(0)
	for _, tc := range []struct {
		limit *int64
		want  int
	}{{nil, 10}, {&three, 3}, {&zero, 0}} {
		a := &Application{Spec: Spec{RevisionHistoryLimit: tc.limit}}
		if got := a.HistoryLimit(); got != tc.want {
			t.Errorf("HistoryLimit() with %v = %d, want %d", tc.limit, got, tc.want)
		}
		var s Status
		var last int64
		for i := range 12 {
			last = s.AddHistory(HistoryEntry{Revision: string(rune('a' + i))}, a.HistoryLimit())
		}
		if len(s.History) != tc.want {
			t.Errorf("limit %d: history holds %d entries", tc.want, len(s.History))
		}
		if tc.want > 0 && (s.History[len(s.History)-1].ID != last || s.History[0].ID != int64(12-tc.want)) {
			t.Errorf("limit %d: history %+v does not hold the last entries", tc.want, s.History)
		}
	}
}

func TestAddHistory(t *testing.T) {
	var s Status
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range 13 {
		id := s.AddHistory(HistoryEntry{ID: 99, Revision: string(rune('a' + i)), DeployedAt: at}, HistoryLimit)
		if id != int64(i) {
			t.Fatalf("entry %d got ID %d", i, id)
		}
	}
	if len(s.History) != HistoryLimit {
		t.Fatalf("history holds %d entries, want %d", len(s.History), HistoryLimit)
	}
	for i, e := range s.History {
		if e.ID != int64(i+3) {
			t.Errorf("History[%d].ID = %d, want %d (the last ten, oldest first)", i, e.ID, i+3)
		}
	}
	if e, ok := s.HistoryByID(12); !ok || e.Revision != "m" {
		t.Errorf("HistoryByID(12) = %+v, %t", e, ok)
	}
	if _, ok := s.HistoryByID(2); ok {
		t.Error("HistoryByID found a dropped entry")
	}
}

func TestHealthSeverity(t *testing.T) {
	order := []HealthStatusCode{HealthHealthy, HealthSuspended, HealthProgressing, HealthMissing, HealthDegraded, HealthUnknown}
	for i := 1; i < len(order); i++ {
		if !order[i].IsWorseThan(order[i-1]) || order[i-1].IsWorseThan(order[i]) {
			t.Errorf("%s should be worse than %s", order[i], order[i-1])
		}
	}
	if HealthStatusCode("Bogus").Severity() != HealthUnknown.Severity() {
		t.Error("an unrecognised code is not Unknown")
	}
}

func res(region string, sync SyncStatusCode, health HealthStatusCode) ResourceStatus {
	return ResourceStatus{ResourceKey: ResourceKey{Kind: "Deployment", Name: "x"}, Region: region, Status: sync, Health: health}
}

func TestRollUp(t *testing.T) {
	tests := []struct {
		name       string
		resources  []ResourceStatus
		wantSync   SyncStatusCode
		wantHealth HealthStatusCode
	}{
		{"no resources", nil, SyncStatusSynced, HealthHealthy},
		{"all synced and healthy", []ResourceStatus{res("a", SyncStatusSynced, HealthHealthy), res("a", SyncStatusSynced, "")},
			SyncStatusSynced, HealthHealthy},
		{"one out of sync", []ResourceStatus{res("a", SyncStatusSynced, HealthHealthy), res("a", SyncStatusOutOfSync, HealthMissing)},
			SyncStatusOutOfSync, HealthMissing},
		{"unknown without out of sync", []ResourceStatus{res("a", SyncStatusUnknown, HealthHealthy), res("a", SyncStatusSynced, HealthProgressing)},
			SyncStatusUnknown, HealthProgressing},
		{"out of sync beats unknown", []ResourceStatus{res("a", SyncStatusUnknown, ""), res("a", SyncStatusOutOfSync, "")},
			SyncStatusOutOfSync, HealthHealthy},
		{"degraded beats missing", []ResourceStatus{res("a", SyncStatusSynced, HealthMissing), res("a", SyncStatusSynced, HealthDegraded), res("a", SyncStatusSynced, HealthSuspended)},
			SyncStatusSynced, HealthDegraded},
	}
	for _, tt := range tests {
		if got := RollUpSync(tt.resources); got != tt.wantSync {
			t.Errorf("%s: RollUpSync = %s, want %s", tt.name, got, tt.wantSync)
		}
		if got := RollUpHealth(tt.resources); got != tt.wantHealth {
			t.Errorf("%s: RollUpHealth = %s, want %s", tt.name, got, tt.wantHealth)
		}
	}
}

func TestStatusRollUpByRegion(t *testing.T) {
	s := Status{
		Resources: []ResourceStatus{
			res("us-east-1", SyncStatusSynced, HealthHealthy),
			res("us-east-1", SyncStatusSynced, HealthHealthy),
			res("eu-west-1", SyncStatusOutOfSync, HealthDegraded),
		},
		Regions: map[string]RegionSummary{"us-east-1": {Revision: "abc123", Message: "synced"}},
	}
	s.RollUp([]string{"us-east-1", "eu-west-1", "ap-south-1"})
	if s.Sync.Status != SyncStatusOutOfSync || s.Health.Status != HealthDegraded {
		t.Errorf("app status = %s/%s, want OutOfSync/Degraded", s.Sync.Status, s.Health.Status)
	}
	want := map[string]RegionSummary{
		"us-east-1":  {Sync: SyncStatusSynced, Health: HealthHealthy, Revision: "abc123", Message: "synced", Resources: 2},
		"eu-west-1":  {Sync: SyncStatusOutOfSync, Health: HealthDegraded, Resources: 1},
		"ap-south-1": {Sync: SyncStatusSynced, Health: HealthHealthy},
	}
	if len(s.Regions) != len(want) {
		t.Fatalf("regions = %+v", s.Regions)
	}
	for region, w := range want {
		if got := s.Regions[region]; got != w {
			t.Errorf("%s: %+v, want %+v", region, got, w)
		}
	}
}

// TestInitiatedByString: app get and the Web UI name who initiated an
// operation as Argo CD's UI does.
func TestInitiatedByString(t *testing.T) {
	for _, tc := range []struct {
		by   *InitiatedBy
		want string
	}{
		{nil, ""},
		{&InitiatedBy{Username: "admin"}, "admin"},
		{&InitiatedBy{Automated: true}, "automated sync policy"},
		{&InitiatedBy{Username: "applicationset-controller", Automated: true}, "applicationset-controller (automated)"},
	} {
		if got := tc.by.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.by, got, tc.want)
		}
	}
}
