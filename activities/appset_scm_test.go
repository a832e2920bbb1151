package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/scm/scmtest"
)

const scmToken = "t0k3n-never-shown"

// TestGenerateSCMFailureIsNotRetried: a provider answering 500 (or what
// its API does not document) fails the generation at once, not retried
// (the set says why and keeps its apps; its next poll lists again), and
// the error names the request, never the token.
func TestGenerateSCMFailureIsNotRetried(t *testing.T) {
	s := scmtest.New(scmToken)
	defer s.Close()
	s.AddRepo(scmtest.Repo{Owner: "acme", Name: "shop", DefaultBranch: "main", Branches: map[string]string{"main": "abc"}})
	set, err := appset.Read(fmt.Appendf(nil, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews}
spec:
  generators:
  - pullRequest:
      github: {owner: acme, repo: shop, api: %q, tokenRef: {secretName: scm-token, key: token}}
  template:
    metadata: {name: 'pr-{{number}}'}
    spec: {source: {repoURL: 'https://git.example.com/r.git', path: x}, destination: {name: us-east-1, namespace: x}}
`, s.URL))
	require.NoError(t, err)
	a := &AppSets{SCM: &appset.SCMClients{Token: func(_ context.Context, ref appset.SecretRef) (string, error) {
		if ref.SecretName != "scm-token" {
			return "", errors.New("not found")
		}
		return scmToken, nil
	}}}
	var ts testsuite.WorkflowTestSuite
	for _, tc := range []struct {
		name string
		set  func()
		want string
	}{
		{"500", func() { s.Fail(http.StatusInternalServerError) }, "GET " + s.URL + "/api/v3/repos/acme/shop/pulls: 500 Internal Server Error"},
		{"garbage", func() { s.Fail(0); s.Garbage(true) }, "the answer is not the JSON the API documents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.set()
			env := ts.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(a.GenerateAppSet, activity.RegisterOptions{Name: contract.ActivityGenerateAppSet})
			_, err := env.ExecuteActivity(contract.ActivityGenerateAppSet, contract.GenerateInput{Set: *set})
			var ae *temporal.ApplicationError
			require.ErrorAs(t, err, &ae)
			assert.True(t, ae.NonRetryable())
			assert.Equal(t, contract.ErrSCMProvider, ae.Type())
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), scmToken)
		})
	}
	for _, r := range s.Requests() {
		assert.Equal(t, "Bearer "+scmToken, r.Authorization)
	}
}
