package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Condition types, as Argo CD names them.
const (
	conditionComparisonError = "ComparisonError"
	conditionSyncError       = "SyncError"
	conditionRegionError     = "RegionUnreachable"
)

// versionUnreachableStays: a region shown Unreachable that neither answers
// nor fails again in a later fold (an operation that skipped it or whose
// sync there ended Unreachable, the other regions' answers to a compare
// that still waits for it) stays Unreachable with its reason. Before, its
// rows were gone and it was summarised from none: Synced and Healthy with
// no resources, and the app with it, until its compare failed again.
const versionUnreachableStays = "unreachable-stays"

// setResources replaces the resource statuses of the regions that answered,
// marks the others Unknown with the reason, and rolls the status up.
func (s *appState) setResources(ctx workflow.Context, sha string, byRegion map[string][]app.ResourceStatus, regionErrs map[string]error) {
	var resources []app.ResourceStatus
	for _, r := range s.Status.Resources {
		// The child apps' rows stay too until their compare answers: the
		// regions answer first, and an app of apps is not Synced for a moment.
		kept := s.hasRegion(r.Region) || (r.Region == childrenRegion && s.hasChildren())
		if _, answered := byRegion[r.Region]; !answered && regionErrs[r.Region] == nil && kept {
			resources = append(resources, r)
		}
	}
	for _, region := range workflow.DeterministicKeys(byRegion) {
		resources = append(resources, byRegion[region]...)
	}
	s.Status.Resources = resources
	prev := s.Status.Regions
	s.Status.Regions = app.SummarizeRegions(resources, s.regionNames())
	var unreachable []string
	for _, region := range workflow.DeterministicKeys(regionErrs) {
		msg := rootMessage(ctx, regionErrs[region])
		sum := s.Status.Regions[region]
		sum.Sync, sum.Health, sum.Message = app.SyncStatusUnknown, app.HealthUnknown, msg
		sum.Unreachable = isUnreachable(regionErrs[region])
		s.Status.Regions[region] = sum
		unreachable = append(unreachable, region+": "+msg)
	}
	unreachable = append(unreachable, s.keepUnreachable(ctx, prev, byRegion, regionErrs)...)
	// A region whose compare runs on shows what it showed last, and the app
	// as a whole is not known to be Synced or Healthy until it answers.
	waiting := false
	for _, region := range workflow.DeterministicKeys(s.stragglers) {
		last, ok := prev[region]
		if _, answered := byRegion[region]; answered || regionErrs[region] != nil {
			continue
		}
		waiting = true
		if !ok {
			continue
		}
		if !last.Unreachable {
			last.Message = "no answer yet from its compare of " + short(sha)
		}
		s.Status.Regions[region] = last
		if last.Unreachable {
			unreachable = append(unreachable, region+": "+last.Message)
		}
	}
	for _, region := range workflow.DeterministicKeys(s.Status.Regions) {
		sum := s.Status.Regions[region]
		sum.SyncedRevision = prev[region].SyncedRevision
		if _, answered := byRegion[region]; answered {
			sum.Revision = sha
			if sum.Sync == app.SyncStatusSynced {
				sum.SyncedRevision = sha
			}
		} else {
			// Not compared now: the revision it was last compared at.
			sum.Revision = prev[region].Revision
		}
		s.Status.Regions[region] = sum
	}
	s.Status.Sync = app.SyncStatus{Status: app.RollUpSync(resources), Revision: sha, Revisions: s.revisionsOf(sha)}
	s.Status.Health = app.HealthStatus{Status: app.RollUpHealth(resources)}
	if len(unreachable) > 0 || waiting {
		// OutOfSync where a region answered still says OutOfSync: an
		// automated app syncs the regions it can reach.
		if s.Status.Sync.Status != app.SyncStatusOutOfSync {
			s.Status.Sync.Status = app.SyncStatusUnknown
		}
		s.Status.Health.Status = app.HealthUnknown
	}
	if len(unreachable) > 0 {
		s.setConditionAt(conditionRegionError, strings.Join(unreachable, "; "))
	} else {
		s.clearCondition(conditionRegionError)
	}
}

// keepUnreachable shows the regions that were Unreachable, and neither
// answered nor failed now, as they were (versionUnreachableStays); it
// returns their reasons.
func (s *appState) keepUnreachable(ctx workflow.Context, prev map[string]app.RegionSummary, byRegion map[string][]app.ResourceStatus,
	regionErrs map[string]error) (reasons []string) {
	for _, region := range workflow.DeterministicKeys(prev) {
		last := prev[region]
		_, answered := byRegion[region]
		if _, now := s.Status.Regions[region]; !now || !last.Unreachable || answered || regionErrs[region] != nil || s.isStraggler(region) {
			continue
		}
		if changeVersion(ctx, versionUnreachableStays) < 1 {
			return nil
		}
		s.Status.Regions[region] = last
		reasons = append(reasons, region+": "+last.Message)
	}
	return reasons
}

// setSyncedRevision records that a sync applied sha in region.
func (s *appState) setSyncedRevision(region, sha string) {
	if sum, ok := s.Status.Regions[region]; ok {
		sum.SyncedRevision = sha
		s.Status.Regions[region] = sum
	}
}

func (s *appState) setComparisonError(ctx workflow.Context, err error) {
	s.Status.Sync.Status = app.SyncStatusUnknown
	s.setCondition(conditionComparisonError, userMessage(ctx, err))
}

func (s *appState) setCondition(typ, msg string) { s.setConditionAt(typ, msg) }

func (s *appState) setConditionAt(typ, msg string) {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == typ {
			s.Status.Conditions[i].Message = msg
			return
		}
	}
	s.Status.Conditions = append(s.Status.Conditions, app.Condition{Type: typ, Message: msg})
}

func (s *appState) clearCondition(typ string) {
	s.Status.Conditions = slices.DeleteFunc(s.Status.Conditions, func(c app.Condition) bool { return c.Type == typ })
}

func (s *appState) regionNames() []string { return s.app.Regions(s.cfg.Regions) }

func (s *appState) destinations() []app.Target { return s.app.Destinations(s.cfg.Regions) }

// inventory is the app's objects in a region as its status lists them
// (contract.CompareInput.Inventory).
func (s *appState) inventory(region string) []app.ResourceKey {
	var keys []app.ResourceKey
	for _, r := range s.Status.Resources {
		if r.Region == region {
			keys = append(keys, r.ResourceKey)
		}
	}
	return keys
}

// resourcesSettling reports whether a resource is still becoming healthy
// in the few minutes after a sync (a LoadBalancer Service without a load
// balancer stays Progressing for good: the app then goes back to its poll).
func (s *appState) resourcesSettling(now time.Time) bool {
	op := s.Status.OperationState
	if op == nil || op.FinishedAt == nil || now.Sub(*op.FinishedAt) > settleWindow {
		return false
	}
	for _, r := range s.Status.Resources {
		if r.Region != childrenRegion && r.Status == app.SyncStatusSynced && r.Health == app.HealthProgressing {
			return true
		}
	}
	return false
}

func (s *appState) anyUnreachable() bool {
	for _, sum := range s.Status.Regions {
		if sum.Unreachable {
			return true
		}
	}
	return false
}

func (s *appState) hasRegion(region string) bool { return slices.Contains(s.regionNames(), region) }

// Search attributes of an app, so the Web UI and `ferry app list` filter on them.
var (
	saApp     = temporal.NewSearchAttributeKeyKeyword(contract.SearchApp)
	saRepo    = temporal.NewSearchAttributeKeyKeyword(contract.SearchRepoURL)
	saSync    = temporal.NewSearchAttributeKeyKeyword(contract.SearchSync)
	saHealth  = temporal.NewSearchAttributeKeyKeyword(contract.SearchHealth)
	saRev     = temporal.NewSearchAttributeKeyKeyword(contract.SearchRev)
	saRegions = temporal.NewSearchAttributeKeyKeywordList(contract.SearchRegions)
	saProject = temporal.NewSearchAttributeKeyKeyword(contract.SearchProject)
	saOp      = temporal.NewSearchAttributeKeyKeyword(contract.SearchOperation)
	saRepos   = temporal.NewSearchAttributeKeyKeywordList(contract.SearchRepoURLs)
	saAppNS   = temporal.NewSearchAttributeKeyKeyword(contract.SearchAppNamespace)
)

// versionRepoURLs adds every Git repository of the app's sources
// (FerryRepoURLs) to the search attributes, for the webhook: recorded runs
// upserted no such attribute.
const versionRepoURLs = "repo-urls-search-attribute"

// versionAppInfo adds the project and the last operation's phase to the
// search attributes (for ferry_app_info): an operation's phase changes
// where recorded runs upserted nothing.
const versionAppInfo = "app-info-search-attributes"

// searchAttrs is what was last upserted: an upsert costs a history event,
// so only changes are written.
type searchAttrs struct {
	App, Repo, Sync, Health, Revision string
	Regions                           []string
	Project, Operation                string
	RepoURLs                          []string `json:",omitempty"`
	// Namespace: of the Application object that owns the app.
	Namespace string `json:",omitempty"`
}

// publish upserts the search attributes that changed and the current details.
func (s *appState) publish(ctx workflow.Context) {
	next := searchAttrs{
		App: s.app.Metadata.Name, Repo: s.app.PrimaryRepoURL(),
		Sync: string(s.Status.Sync.Status), Health: string(s.Status.Health.Status),
		Revision: s.Status.Sync.Revision, Regions: s.regionNames(),
	}
	var updates []temporal.SearchAttributeUpdate
	prev := s.SearchUpserted
	add := func(changed bool, u temporal.SearchAttributeUpdate) {
		if changed {
			updates = append(updates, u)
		}
	}
	add(prev.App != next.App, saApp.ValueSet(next.App))
	add(prev.Repo != next.Repo, saRepo.ValueSet(next.Repo))
	add(prev.Sync != next.Sync, saSync.ValueSet(next.Sync))
	add(prev.Health != next.Health, saHealth.ValueSet(next.Health))
	add(prev.Revision != next.Revision && next.Revision != "", saRev.ValueSet(next.Revision))
	add(!slices.Equal(prev.Regions, next.Regions), saRegions.ValueSet(next.Regions))
	if changeVersion(ctx, versionAppInfo) == 1 {
		next.Project = s.app.ProjectOf()
		if op := s.Status.OperationState; op != nil {
			next.Operation = string(op.Phase)
		}
		add(prev.Project != next.Project, saProject.ValueSet(next.Project))
		add(prev.Operation != next.Operation && next.Operation != "", saOp.ValueSet(next.Operation))
	}
	if changeVersion(ctx, versionRepoURLs) == 1 {
		next.RepoURLs = s.app.GitRepoURLs()
		u := saRepos.ValueSet(next.RepoURLs)
		if len(next.RepoURLs) == 0 {
			u = saRepos.ValueUnset() // a chart source alone: no Git repository
		}
		add(!slices.Equal(prev.RepoURLs, next.RepoURLs), u)
	}
	if s.Owner != nil && s.Owner.Object != "" { // no recorded run has one: no version
		next.Namespace, _, _ = strings.Cut(s.Owner.Object, "/")
	}
	nsUpdate := saAppNS.ValueSet(next.Namespace)
	if next.Namespace == "" {
		nsUpdate = saAppNS.ValueUnset()
	}
	add(prev.Namespace != next.Namespace, nsUpdate)
	if len(updates) > 0 {
		if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
			workflow.GetLogger(ctx).Warn("upsert search attributes failed", "error", err)
		} else {
			s.SearchUpserted = next
		}
	}
	workflow.SetCurrentDetails(ctx, s.details())
	s.notify(ctx)
	s.publishObject(ctx)
}

// details is the markdown the Web UI shows for the app at a glance.
func (s *appState) details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s · %s · revision `%s`\n\n", s.app.Metadata.Name,
		s.Status.Sync.Status, s.Status.Health.Status, short(s.Status.Sync.Revision))
	if s.app.IsMultiSource() {
		s.sourcesDetails(&b) // multisource.go
	} else {
		fmt.Fprintf(&b, "repo %s path `%s`\n\n", s.app.Spec.Source.RepoURL, s.app.Spec.Source.Path)
	}
	if link := s.uiLink(); link != "" {
		fmt.Fprintf(&b, "[Open %s in Ferry](%s)\n\n", s.app.Metadata.Name, link)
	}
	b.WriteString("| region | sync | health | resources |\n|---|---|---|---|\n")
	for _, region := range workflow.DeterministicKeys(s.Status.Regions) {
		r := s.Status.Regions[region]
		fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", region, r.Sync, r.Health, r.Resources)
	}
	if op := s.Status.OperationState; op != nil {
		fmt.Fprintf(&b, "\nlast operation %s: %s %s\n", op.ID, op.Phase, op.Message)
		if o := op.Operation; o != nil && o.InitiatedBy != nil {
			fmt.Fprintf(&b, "\ninitiated by %s\n", o.InitiatedBy)
		}
	}
	return b.String()
}

// uiLink is the app's page in ferry-server's web UI, or "" when the
// workers were given no --ui-url.
func (s *appState) uiLink() string {
	if s.cfg.UIURL == "" {
		return ""
	}
	ns := ""
	if s.Owner != nil && s.Owner.Object != "" {
		ns, _, _ = strings.Cut(s.Owner.Object, "/")
	}
	return s.cfg.UIURL + contract.AppPagePath(ns, s.app.Metadata.Name)
}

func metrics(ctx workflow.Context) client.MetricsHandler { return workflow.GetMetricsHandler(ctx) }

// appMetrics is metrics tagged with the app's name and project, as Argo
// CD's per-app metrics are.
func (s *appState) appMetrics(ctx workflow.Context) client.MetricsHandler {
	return metrics(ctx).WithTags(map[string]string{"name": s.app.Metadata.Name, "project": s.app.ProjectOf()})
}
