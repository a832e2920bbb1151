package workflows

import (
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// Names of the search attributes an app upserts (DESIGN.md).
const (
	SearchApp     = "FerryApp"
	SearchRepoURL = "FerryRepoURL"
	SearchSync    = "FerrySyncStatus"
	SearchHealth  = "FerryHealthStatus"
	SearchRev     = "FerryRevision"
	SearchRegions = "FerryRegions"
	// SearchProject and SearchOperation are upserted by runs that reached
	// the app-info version (status.go): the app's project, and the phase
	// of its last operation (Running, Succeeded, Failed, …; empty: none).
	SearchProject   = "FerryProject"
	SearchOperation = "FerryOperation"
)

// Summary is an app as its search attributes describe it, for listings.
type Summary struct {
	App, RepoURL, Sync, Health, Revision string
	Regions                              []string
	Project, Operation                   string
}

// SummaryOf decodes the search attributes of an Application execution.
func SummaryOf(sa *commonpb.SearchAttributes) Summary {
	dc := converter.GetDefaultDataConverter()
	fields := sa.GetIndexedFields()
	str := func(name string) string {
		var v string
		if p, ok := fields[name]; ok {
			_ = dc.FromPayload(p, &v)
		}
		return v
	}
	var regions []string
	if p, ok := fields[SearchRegions]; ok {
		_ = dc.FromPayload(p, &regions)
	}
	return Summary{
		App: str(SearchApp), RepoURL: str(SearchRepoURL), Sync: str(SearchSync),
		Health: str(SearchHealth), Revision: str(SearchRev), Regions: regions,
		Project: str(SearchProject), Operation: str(SearchOperation),
	}
}
