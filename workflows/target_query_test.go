package workflows

import (
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
)

// TestTargetQueryAnswersTheLastRender: the target query names the commit
// and digest of the manifests the app rendered last (what ferry-server has
// handed over), and says so when nothing was rendered yet.
func (s *appSuite) TestTargetQueryAnswersTheLastRender() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "sha256:d1", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.RegisterDelayedCallback(func() {
		res, err := s.env.QueryWorkflow(contract.QueryTarget)
		s.Require().NoError(err)
		var t contract.Target
		s.Require().NoError(res.Get(&t))
		s.Equal("aaaaaaaaaaaaaaaa", t.SHA)
		s.Equal("sha256:d1", t.Digest)
		s.Equal(testApp(false).Metadata.Name, t.App)
		s.Equal(testApp(false).Spec.Source.RepoURL, t.Source.RepoURL)
	}, time.Second)
	s.deleteAt(2*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
}
