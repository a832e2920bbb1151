package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// rollingAppSet is a RollingSync set of three apps of a list generator:
// rs-a1 and rs-a2 labelled env=dev (step 1), rs-b1 env=prod (step 2), each
// syncing apps/<app> of the repo with automated sync, which the strategy
// turns off.
func rollingAppSet(repoURL string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: rs
spec:
  generators:
  - list:
      elements:
      - {app: a1, env: dev}
      - {app: a2, env: dev}
      - {app: b1, env: prod}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
        maxUpdate: 100%
  template:
    metadata:
      name: 'rs-{{app}}'
      labels: {env: '{{env}}'}
    spec:
      pollInterval: 5s
`)
	fmt.Fprintf(&b, "      source: {repoURL: %s, targetRevision: main, path: 'apps/{{app}}'}\n      destinations:\n", repoURL)
	for _, r := range regions {
		fmt.Fprintf(&b, "      - {name: %s, namespace: 'rs-{{app}}'}\n", r)
	}
	b.WriteString("      syncPolicy:\n        automated: {prune: true}\n        syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

func appStatusOf(v *contract.AppSetView, name string) appset.ApplicationStatus {
	for _, s := range v.Status.ApplicationStatus {
		if s.Application == name {
			return s
		}
	}
	return appset.ApplicationStatus{}
}

// firstSyncAfter is when the app's last operation started, which must be
// after since.
func lastOpStart(t *testing.T, c client.Client, name string) time.Time {
	t.Helper()
	v, err := queryView(t, c, name)
	require.NoError(t, err)
	require.NotNil(t, v.Status.OperationState, "app %s has synced", name)
	return v.Status.OperationState.StartedAt
}

// TestAppSetRollingSync: RollingSync over two steps. The second step's app
// is not synced until the first step's apps are Healthy; a commit that
// breaks an app of step one halts the rollout there, the set's status
// naming the step and the app, and leaves step two on the old commit; a
// fixing commit resumes the rollout through step two.
func TestAppSetRollingSync(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "appset-rolling")
	files := map[string]string{}
	for _, a := range []string{"a1", "a2", "b1"} {
		files["apps/"+a+"/cm.yaml"] = configMap("cm-"+a, "v1")
	}
	repo.write(files)
	sha1 := repo.commitAndPush("v1 of three apps")
	mustFerry(t, "appset", "apply", "-f", writeFile(t, rollingAppSet(repo.URL)))
	c := temporalClient(t)
	for _, a := range []string{"rs-a1", "rs-a2", "rs-b1"} {
		waitApp(t, a, sha1, 3*time.Minute)
	}
	var v *contract.AppSetView
	eventually(t, time.Minute, "the rollout completes", func() (bool, string) {
		var err error
		if v, err = queryAppSet(t, c, "rs"); err != nil {
			return false, err.Error()
		}
		return condition(v, contract.AppSetRolloutProgressing).Status == "False", fmt.Sprintf("%+v", v.Status)
	})
	require.Equal(t, "ApplicationSet Rollout has completed", condition(v, contract.AppSetRolloutProgressing).Message)
	for _, a := range []string{"rs-a1", "rs-a2", "rs-b1"} {
		av, err := queryView(t, c, a)
		require.NoError(t, err)
		require.False(t, av.AutomatedSync(), "RollingSync turns automated sync off on %s", a)
		require.Equal(t, appset.ProgressiveHealthy, appStatusOf(v, a).Status, "%s", a)
	}
	for name, row := range listedApps(t) {
		if strings.HasPrefix(name, "rs-") {
			require.Equal(t, "rs", strings.Fields(row)[len(strings.Fields(row))-1], "ferry app list names the set of %s: %s", name, row)
		}
	}
	require.Equal(t, "1", appStatusOf(v, "rs-a1").Step)
	require.Equal(t, "2", appStatusOf(v, "rs-b1").Step)
	// Step 2's sync began after step 1's apps became Healthy.
	b1Start := lastOpStart(t, c, "rs-b1")
	for _, a := range []string{"rs-a1", "rs-a2"} {
		healthy := appStatusOf(v, a).LastTransitionTime
		require.NotNil(t, healthy)
		require.True(t, b1Start.After(*healthy), "rs-b1 synced at %s, before %s became Healthy at %s", b1Start, a, healthy)
	}

	// v2 breaks rs-a2 (an object the API server refuses): the rollout
	// halts at step 1, naming it; rs-b1 stays on v1.
	for _, a := range []string{"a1", "a2", "b1"} {
		files["apps/"+a+"/cm.yaml"] = configMap("cm-"+a, "v2")
	}
	files["apps/a2/sa.yaml"] = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: Bad_Name\n"
	repo.write(files)
	sha2 := repo.commitAndPush("v2, with an invalid object in a2")
	mustFerry(t, "appset", "refresh", "rs")
	waitApp(t, "rs-a1", sha2, 2*time.Minute)
	eventually(t, 2*time.Minute, "the rollout halts at step 1 naming rs-a2", func() (bool, string) {
		var err error
		if v, err = queryAppSet(t, c, "rs"); err != nil {
			return false, err.Error()
		}
		cond := condition(v, contract.AppSetRolloutProgressing)
		a2 := appStatusOf(v, "rs-a2")
		return cond.Status == "True" && strings.Contains(cond.Message, `rollout of step 1: app "rs-a2": sync Failed`) &&
			a2.Status == appset.ProgressiveProgressing && strings.Contains(a2.Message, "Bad_Name"), fmt.Sprintf("%+v", v.Status)
	})
	require.Equal(t, appset.ProgressiveWaiting, appStatusOf(v, "rs-b1").Status, "step 2 waits")
	for _, r := range regions {
		require.Equal(t, "v2", configMapVersion(t, r, "rs-a1", "cm-a1"), "step 1 synced in %s", r)
		require.Equal(t, "v1", configMapVersion(t, r, "rs-b1", "cm-b1"), "step 2 not synced in %s", r)
	}
	require.True(t, lastOpStart(t, c, "rs-b1").Equal(b1Start), "rs-b1 has not synced again")
	out := mustFerry(t, "appset", "get", "rs")
	require.Contains(t, out, "Strategy:      RollingSync (2 steps)")
	require.Regexp(t, `rs-a2\s+1\s+Progressing`, out)
	require.Regexp(t, `rs-b1\s+2\s+Waiting`, out)

	// The fix: the rollout resumes and goes through step 2.
	delete(files, "apps/a2/sa.yaml")
	repo.git("rm", "-q", "apps/a2/sa.yaml")
	sha3 := repo.commitAndPush("fix a2")
	mustFerry(t, "appset", "refresh", "rs")
	for _, a := range []string{"rs-a1", "rs-a2", "rs-b1"} {
		waitApp(t, a, sha3, 3*time.Minute)
	}
	eventually(t, 2*time.Minute, "the rollout completes again", func() (bool, string) {
		var err error
		if v, err = queryAppSet(t, c, "rs"); err != nil {
			return false, err.Error()
		}
		return condition(v, contract.AppSetRolloutProgressing).Status == "False", fmt.Sprintf("%+v", v.Status)
	})
	for _, r := range regions {
		require.Equal(t, "v2", configMapVersion(t, r, "rs-b1", "cm-b1"), "step 2 synced in %s", r)
	}
	b1Again := lastOpStart(t, c, "rs-b1")
	for _, a := range []string{"rs-a1", "rs-a2"} {
		require.True(t, b1Again.After(*appStatusOf(v, a).LastTransitionTime), "step 2 after %s was Healthy", a)
	}
	recordWorkflowHistories(t, contract.AppSetWorkflowID("rs"), "appset-rolling")
	mustFerry(t, "appset", "delete", "rs")
	for _, a := range []string{"rs-a1", "rs-a2", "rs-b1"} {
		appGone(t, c, a)
	}
}
