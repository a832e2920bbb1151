package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// lockedDefaultProject is an AppProject named default that allows one
// namespace only, as Argo CD's users lock the default project down.
const lockedDefaultProject = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: argocd
spec:
  description: the default project, locked to namespace dp-allowed
  sourceRepos: ['*']
  destinations:
  - {name: '*', namespace: dp-allowed}
  clusterResourceWhitelist:
  - {group: '', kind: Namespace}
`

// TestDefaultProjectObject: an AppProject named default replaces the
// built-in default project. With one that allows namespace dp-allowed only,
// an app of the default project writing elsewhere is refused when applied,
// one that ran before gets Argo CD's InvalidSpecError at its next refresh,
// and one writing to dp-allowed syncs. Deleting the object restores the
// built-in default project.
func TestDefaultProjectObject(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "default-project")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")

	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("dp-before", repo.URL, "app", "dp-before", true, "3m")))
	waitApp(t, "dp-before", sha, 2*time.Minute)

	mustFerry(t, "project", "apply", "-f", writeFile(t, lockedDefaultProject))
	t.Cleanup(func() { _, _ = ferry(t, "project", "delete", "default") })
	require.Contains(t, mustFerry(t, "project", "get", "default"), "locked to namespace dp-allowed")

	out, err := ferry(t, "app", "apply", "-f", writeFile(t, appYAML("dp-elsewhere", repo.URL, "app", "dp-elsewhere", true, "3m")))
	require.Error(t, err, out)
	require.Contains(t, out, `app "dp-elsewhere": project "default" does not allow destination us-east-1/dp-elsewhere (destinations)`)

	mustFerry(t, "app", "refresh", "dp-before")
	want := app.Condition{Type: app.ConditionInvalidSpecError,
		Message: "application destination server 'us-east-1' and namespace 'dp-before' do not match any of the allowed destinations in project 'default'"}
	eventually(t, time.Minute, "dp-before refused by the default project", func() (bool, string) {
		v, err := queryView(t, c, "dp-before")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusUnknown && containsCondition(v.Status.Conditions, want), fmt.Sprint(v.Status.Conditions)
	})

	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("dp-allowed", repo.URL, "app", "dp-allowed", true, "3m")))
	waitApp(t, "dp-allowed", sha, 2*time.Minute)
	recordHistories(t, "dp-allowed")

	mustFerry(t, "project", "delete", "default")
	require.Contains(t, mustFerry(t, "project", "get", "default"), "Ferry's built-in project")
	out, err = ferry(t, "project", "delete", "default")
	require.Error(t, err, out)
	require.Contains(t, out, "built in")
	mustFerry(t, "app", "refresh", "dp-before")
	eventually(t, time.Minute, "dp-before permitted again", func() (bool, string) {
		v, err := queryView(t, c, "dp-before")
		if err != nil {
			return false, err.Error()
		}
		return !containsCondition(v.Status.Conditions, want) && v.Status.Sync.Status == app.SyncStatusSynced, fmt.Sprint(v.Status.Conditions)
	})
	recordHistories(t, "dp-before")
}

func containsCondition(conds []app.Condition, want app.Condition) bool {
	for _, c := range conds {
		if c.Type == want.Type && strings.Contains(c.Message, want.Message) {
			return true
		}
	}
	return false
}
