package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestRevisionMetadataAPI: GET …/revisions/{revision}/metadata answers,
// as Argo CD's does, the author, date and message of the commit the app
// synced, by full or short SHA, to a user who may get the app; an unknown
// SHA is a 404 naming it and the repository, a bad parameter a 400 naming
// it, and a user who may not get the app a 403.
func TestRevisionMetadataAPI(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  accounts.reader: login
  accounts.outsider: login
`, "apply", "-f", "-")
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.csv: |
    p, reader, applications, get, revs/*, allow
`, "apply", "-f", "-")
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	for _, who := range []string{"reader", "outsider"} {
		s.MustDo(t, admin, "PUT", "/api/v1/account/password",
			map[string]string{"name": who, "currentPassword": adminPassword(t), "newPassword": who + "-password"}, http.StatusOK, nil)
	}
	reader, outsider := s.Login(t, "reader", "reader-password"), s.Login(t, "outsider", "outsider-password")
	repo, sha := s.DeployTeamApp(t, e, admin, "revs", map[string]string{
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n"})
	path := func(rev string) string { return "/api/v1/applications/revs/revisions/" + rev + "/metadata" }

	for _, rev := range []string{sha, sha[:8]} {
		var md struct {
			Author, Message string
			Date            time.Time
			Tags            []string
		}
		s.MustDo(t, reader, "GET", path(rev), nil, http.StatusOK, &md)
		assert.Equal(t, "ferry-e2e <e2e@ferry.invalid>", md.Author, rev)
		assert.Equal(t, "the app revs\n", md.Message, rev)
		assert.WithinDuration(t, time.Now(), md.Date, 15*time.Minute, rev)
		assert.Empty(t, md.Tags, rev)
	}

	const unknown = "0123456789abcdef0123456789abcdef01234567"
	status, body := s.Do(t, reader, "GET", path(unknown), nil)
	assert.Equal(t, http.StatusNotFound, status, body)
	assert.Contains(t, body, unknown)
	assert.Contains(t, body, repo.URL)
	assert.Contains(t, body, "no such branch, tag or commit; the repository has branches main")

	status, body = s.Do(t, reader, "GET", path("a..b"), nil)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `revision \"a..b\"`)
	status, body = s.Do(t, reader, "GET", path(sha)+"?sourceIndex=1", nil)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "sourceIndex")

	status, body = s.Do(t, outsider, "GET", path(sha), nil)
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.NotContains(t, body, "the app revs")

	e.RecordHistories(t, contract.RevisionMetadataWorkflowID(repo.URL, sha), "revmeta")
	e.RecordHistories(t, contract.RevisionMetadataWorkflowID(repo.URL, unknown), "revmeta-unknown")
	require.NotEmpty(t, e2etest.WorkflowHistories(t, e.TemporalClient(t), contract.RevisionMetadataWorkflowID(repo.URL, sha)),
		"the control workers read the commit through the RevisionMetadata workflow")
}
