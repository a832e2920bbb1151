package app

// HistoryLimit is how many deployments Status.History keeps when
// spec.revisionHistoryLimit is unset, Argo CD's default.
const HistoryLimit = 10

// HistoryLimit is how many deployments the app's history keeps:
// spec.revisionHistoryLimit, or HistoryLimit when unset (or, unvalidated,
// negative).
func (a *Application) HistoryLimit() int {
	if n := a.Spec.RevisionHistoryLimit; n != nil && *n >= 0 {
		return int(min(*n, 1<<20))
	}
	return HistoryLimit
}

// AddHistory records a deployment: it gives the entry the next ID (0 for the
// first, then one more than the last, as Argo CD numbers them, so IDs keep
// increasing after old entries are dropped), appends it, keeps the last
// limit entries (Application.HistoryLimit), and returns the ID.
func (s *Status) AddHistory(e HistoryEntry, limit int) int64 {
	e.ID = 0
	if n := len(s.History); n > 0 {
		e.ID = s.History[n-1].ID + 1
	}
	s.History = append(s.History, e)
	if over := len(s.History) - max(limit, 0); over > 0 {
		s.History = append([]HistoryEntry(nil), s.History[over:]...)
	}
	return e.ID
}

// HistoryByID finds the deployment with that ID, for rollback.
func (s *Status) HistoryByID(id int64) (HistoryEntry, bool) {
	for _, e := range s.History {
		if e.ID == id {
			return e, true
		}
	}
	return HistoryEntry{}, false
}

// Severity orders health from best to worst as Argo CD (gitops-engine's
// health order) does: Healthy 0 < Suspended 1 < Progressing 2 < Missing 3
// < Degraded 4 < Unknown 5. An unrecognised code counts as Unknown.
func (h HealthStatusCode) Severity() int {
	switch h {
	case HealthHealthy:
		return 0
	case HealthSuspended:
		return 1
	case HealthProgressing:
		return 2
	case HealthMissing:
		return 3
	case HealthDegraded:
		return 4
	}
	return 5
}

// IsWorseThan reports whether h is more severe than other.
func (h HealthStatusCode) IsWorseThan(other HealthStatusCode) bool {
	return h.Severity() > other.Severity()
}

// RollUpHealth is the health of a set of resources: the worst of theirs.
// Resources with no health (kinds without a health check, such as a
// ConfigMap) do not count, as in Argo CD; a set with none is Healthy.
func RollUpHealth(resources []ResourceStatus) HealthStatusCode {
	worst := HealthHealthy
	for _, r := range resources {
		if r.Health != "" && r.Health.IsWorseThan(worst) {
			worst = r.Health
		}
	}
	return worst
}

// RollUpSync is the sync status of a set of resources: OutOfSync if any
// counts as OutOfSync, else Unknown if any could not be compared, else
// Synced (also when the set is empty: nothing to deploy is in sync). A
// resource counts as its CountsAs when it has one (ResourceStatus.AppSync).
func RollUpSync(resources []ResourceStatus) SyncStatusCode {
	status := SyncStatusSynced
	for _, r := range resources {
		switch r.AppSync() {
		case SyncStatusOutOfSync:
			return SyncStatusOutOfSync
		case SyncStatusSynced:
		default:
			status = SyncStatusUnknown
		}
	}
	return status
}

// SummarizeRegions rolls resources up per region. Every region in regions
// gets an entry, Synced and Healthy with no resources if none is there;
// resources of other regions get entries too. Revision and Message are left
// to the caller.
func SummarizeRegions(resources []ResourceStatus, regions []string) map[string]RegionSummary {
	byRegion := map[string][]ResourceStatus{}
	for _, r := range regions {
		byRegion[r] = nil
	}
	for _, r := range resources {
		byRegion[r.Region] = append(byRegion[r.Region], r)
	}
	out := make(map[string]RegionSummary, len(byRegion))
	for region, rs := range byRegion {
		out[region] = RegionSummary{
			Sync:      RollUpSync(rs),
			Health:    RollUpHealth(rs),
			Resources: len(rs),
		}
	}
	return out
}

// RollUp recomputes the app's sync and health status and its region
// summaries from s.Resources, keeping each region's Revision and Message.
// It does not touch s.Sync.Revision or s.Health.Message.
func (s *Status) RollUp(regions []string) {
	s.Sync.Status = RollUpSync(s.Resources)
	s.Health.Status = RollUpHealth(s.Resources)
	summaries := SummarizeRegions(s.Resources, regions)
	for region, sum := range summaries {
		if prev, ok := s.Regions[region]; ok {
			sum.Revision, sum.Message = prev.Revision, prev.Message
			summaries[region] = sum
		}
	}
	s.Regions = summaries
}
