package objects

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// appSet is an ApplicationSet of one app, aset-one: Argo CD's guestbook to
// the namespace of its name.
const appSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: aset
  namespace: argocd
spec:
  generators:
  - list:
      elements:
      - {name: aset-one}
  template:
    metadata:
      name: '{{name}}'
    spec:
      project: default
      source:
        repoURL: %s
        targetRevision: HEAD
        path: guestbook
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{name}}'
      syncPolicy:
        automated: {}
        syncOptions: [CreateNamespace=true]
`

// TestKubectlRunsAnApplicationSet: an ApplicationSet object applied with
// kubectl is Ferry's ApplicationSet, whose app syncs; deleting the object
// deletes the set and its app.
func TestKubectlRunsAnApplicationSet(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "guestbook-appset")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	sha := repo.CommitAndPush("guestbook")
	c := e.TemporalClient(t)

	mustKubectl(t, fmt.Sprintf(appSet, repo.URL), "apply", "-f", "-")
	e2etest.Eventually(t, 3*time.Minute, "aset-one Synced and Healthy at "+e2etest.Short(sha), func() (bool, string) {
		v, err := e2etest.Query(c, "aset-one")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy && v.Status.Sync.Revision == sha,
			fmt.Sprint(v.Status.Sync, v.Status.Health)
	})
	out := e.MustFerry(t, "appset", "get", "aset")
	if !strings.Contains(out, "aset-one") {
		t.Fatalf("ferry appset get aset does not name its app:\n%s", out)
	}

	mustKubectl(t, "", "delete", "applicationset", "aset")
	e2etest.Eventually(t, 2*time.Minute, "the set and its app deleted with the object", func() (bool, string) {
		_, err := e2etest.Query(c, "aset-one")
		gone := err != nil && strings.Contains(err.Error(), "not found")
		_, getErr := e.Ferry(t, "appset", "get", "aset")
		return gone && getErr != nil, fmt.Sprint(err, getErr)
	})
}
