package workflows

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// withFields is the app as JSON with extra top-level and spec fields.
func withFields(t *testing.T, a app.Application, top, spec map[string]any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(a)
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(data, &obj))
	for k, v := range top {
		obj[k] = v
	}
	for k, v := range spec {
		obj["spec"].(map[string]any)[k] = v
	}
	data, err = json.Marshal(obj)
	require.NoError(t, err)
	return data
}

// A start with unknown or unsupported fields (as the temporal CLI sends
// them) fails the workflow for good, naming every one, before any activity.
func (s *appSuite) TestStartRefusesUnknownFields() {
	in := withFields(s.T(), testApp(true).Application, map[string]any{"bogusTop": 1},
		map[string]any{"sourcePath": "x", "sources": []any{map[string]any{"repoURL": "https://a.example/r.git"}, map[string]any{"repoURL": "https://b.example/r.git"}}})
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.True(s.env.IsWorkflowCompleted())
	err := s.env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	s.Require().True(errors.As(err, &appErr), "got %v", err)
	s.Equal("InvalidApplication", appErr.Type())
	s.True(appErr.NonRetryable())
	for _, want := range []string{`application "guestbook"`, "bogusTop", "spec.sourcePath", "spec.sources"} {
		s.Contains(appErr.Message(), want)
	}
}

// The state a run carries to the next is read back, next to a strict app.
func TestParseInputCarriesState(t *testing.T) {
	want := testApp(true)
	want.Carried = &Carried{OperationSeq: 7, ChildApps: []string{"a"}}
	data, err := json.Marshal(want)
	require.NoError(t, err)
	got, err := parseInput(data)
	require.NoError(t, err)
	require.Equal(t, want, got)

	_, err = parseInput(json.RawMessage(`[1, 2]`))
	require.ErrorContains(t, err, "one Application")
	_, err = parseInput(json.RawMessage(`null`))
	require.Error(t, err)
}

// A spec update with an unknown field is refused by its validator, naming
// the field; the app keeps its spec.
func (s *appSuite) TestSpecUpdateRefusesUnknownFields() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{"us-east-1": "aaaaaaaaaaaaaaaa", "eu-west-1": "aaaaaaaaaaaaaaaa"}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	next := testApp(true).Application
	next.Spec.Source.Path = "elsewhere"
	bad := withFields(s.T(), next, nil, map[string]any{"destinaton": map[string]any{"name": "us-east-1"}})
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSpec, "bad-spec", &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				s.ErrorContains(err, "spec.destinaton")
				s.True(strings.Contains(err.Error(), "destination"), "the message suggests the field meant: %v", err)
			},
			OnAccept:   func() { s.Fail("update accepted") },
			OnComplete: func(any, error) {},
		}, bad)
		s.Equal("guestbook", s.query().Spec.Source.Path, "nothing changed")
	}, time.Second)
	s.deleteAt(2*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}
