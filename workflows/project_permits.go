package workflows

import (
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// changeProjectPermissions gates the check at each reconcile: runs recorded
// before it check nothing, so their histories replay unchanged.
const changeProjectPermissions = "project-permissions"

// changeDefaultProject gates the checks of an app of the default project
// (its permissions at each reconcile, its sync windows before a sync): an
// AppProject object named default may replace the built-in default project,
// which allows everything, so such an app asks as any other does. Runs
// recorded before it ask nothing for the default project.
const changeDefaultProject = "default-project-object"

// skipsDefaultProject reports whether the app is of the default project and
// its run predates changeDefaultProject: it asks nothing then.
func (s *appState) skipsDefaultProject(ctx workflow.Context) bool {
	return s.app.ProjectOf() == app.DefaultProject &&
		changeVersion(ctx, changeDefaultProject) == workflow.DefaultVersion
}

// projectRefuses checks, before anything else of a reconcile, that the
// app's project still permits its repositories and destinations (it may
// have been edited since the app was applied), as Argo CD's controller
// does at every refresh (refreshAppConditions): when it does not, the app
// gets one InvalidSpecError condition per refusal, in Argo CD's words, its
// sync and health become Unknown, and the reconcile stops: nothing is
// rendered, compared or synced. status.resources keep what was last
// compared, as Argo CD keeps them. An app of the default project asks too:
// the built-in default project permits everything, an applied default
// object what it says.
func (s *appState) projectRefuses(ctx workflow.Context) bool {
	project := s.app.ProjectOf()
	switch {
	case s.skipsDefaultProject(ctx):
		s.setInvalidSpec(nil)
		return false
	case project != app.DefaultProject &&
		changeVersion(ctx, changeProjectPermissions) == workflow.DefaultVersion:
		return false
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: resolveTimeout,
		RetryPolicy:         activityRetry(3),
		Summary:             "permissions of project " + project,
	})
	var out contract.ProjectPermissionsResult
	err := workflow.ExecuteLocalActivity(lctx, contract.ActivityProjectPermissions, contract.ProjectPermissionsInput{
		App: s.app.Metadata.Name, Project: project, Repos: s.app.RepoURLs(), Destinations: s.app.DestinationList(),
	}).Get(ctx, &out)
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &appErr) && appErr.Type() == contract.ErrProjectNotFound:
		out.InvalidSpec = []string{app.MissingProjectCondition(project)}
	case err != nil:
		s.setComparisonError(ctx, fmt.Errorf("app %q: read project %q: %s", s.app.Metadata.Name, project, rootMessage(ctx, err)))
		return true
	}
	s.setInvalidSpec(out.InvalidSpec)
	if len(out.InvalidSpec) == 0 {
		return false
	}
	s.Status.Sync.Status = app.SyncStatusUnknown
	s.Status.Health = app.HealthStatus{Status: app.HealthUnknown}
	for _, region := range workflow.DeterministicKeys(s.Status.Regions) {
		sum := s.Status.Regions[region]
		sum.Sync, sum.Health = app.SyncStatusUnknown, app.HealthUnknown
		sum.Message = "not compared: the app's project does not permit it (InvalidSpecError)"
		s.Status.Regions[region] = sum
	}
	return true
}

// setInvalidSpec replaces the InvalidSpecError conditions with one per
// message, as Argo CD lists them.
func (s *appState) setInvalidSpec(msgs []string) {
	s.Status.Conditions = slices.DeleteFunc(s.Status.Conditions, func(c app.Condition) bool {
		return c.Type == app.ConditionInvalidSpecError
	})
	for _, m := range msgs {
		s.Status.Conditions = append(s.Status.Conditions, app.Condition{Type: app.ConditionInvalidSpecError, Message: m})
	}
}
