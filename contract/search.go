package contract

import (
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// Names of the search attributes an app upserts (DESIGN.md).
const (
	// SearchApp (Keyword) is the app's name.
	SearchApp = "FerryApp"
	// SearchRepoURL (Keyword) is the repository of the app's first source.
	SearchRepoURL = "FerryRepoURL"
	// SearchSync (Keyword) is the app's sync status: Synced, OutOfSync, Unknown.
	SearchSync = "FerrySyncStatus"
	// SearchHealth (Keyword) is the app's health status: Healthy, Progressing, Degraded, …
	SearchHealth = "FerryHealthStatus"
	// SearchRev (Keyword) is the revision the app last compared: a commit SHA or a chart version.
	SearchRev = "FerryRevision"
	// SearchRegions (KeywordList) are the regions the app deploys to.
	SearchRegions = "FerryRegions"
	// SearchProject (Keyword) is the app's project; upserted by runs that
	// reached the app-info version (status.go).
	SearchProject = "FerryProject"
	// SearchOperation (Keyword) is the phase of the app's last operation
	// (Running, Succeeded, Failed, …; empty: none); upserted from the
	// app-info version on.
	SearchOperation = "FerryOperation"
	// SearchRepoURLs (KeywordList) is every Git repository of the app's
	// sources, as written (FerryRepoURL is the first): the webhook finds
	// an app by any of them. Upserted by runs from versionRepoURLs on.
	SearchRepoURLs = "FerryRepoURLs"
	// SearchAppNamespace (Keyword) is the namespace of the Application
	// object an app is (Owner.Object); unset for an app that no object owns.
	SearchAppNamespace = "FerryAppNamespace"
)

// Summary is an app as its search attributes describe it, for listings.
type Summary struct {
	App, RepoURL, Sync, Health, Revision string
	Regions                              []string
	Project, Operation                   string
	// RepoURLs are the app's Git repositories (FerryRepoURLs); empty for
	// an app whose run predates the attribute.
	RepoURLs []string
	// Namespace is the namespace of the app's Application object
	// (FerryAppNamespace); empty when no object owns the app.
	Namespace string
}

// GitRepoURLs are the repositories the app is found by: FerryRepoURLs, or
// FerryRepoURL alone for a run that predates it.
func (s Summary) GitRepoURLs() []string {
	if len(s.RepoURLs) > 0 || s.RepoURL == "" {
		return s.RepoURLs
	}
	return []string{s.RepoURL}
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
	list := func(name string) []string {
		var v []string
		if p, ok := fields[name]; ok {
			_ = dc.FromPayload(p, &v)
		}
		return v
	}
	return Summary{
		App: str(SearchApp), RepoURL: str(SearchRepoURL), Sync: str(SearchSync),
		Health: str(SearchHealth), Revision: str(SearchRev), Regions: list(SearchRegions),
		Project: str(SearchProject), Operation: str(SearchOperation), RepoURLs: list(SearchRepoURLs),
		Namespace: str(SearchAppNamespace),
	}
}

// NoWorkerError says that no worker polls the task queue a request waits
// on, as `temporal task-queue describe` would show.
type NoWorkerError struct{ TaskQueue string }

func (e *NoWorkerError) Error() string {
	return fmt.Sprintf("no worker is polling task queue %s: start ferry-worker --control on this Temporal server and namespace, then try again", e.TaskQueue)
}
