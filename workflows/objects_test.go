package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// An app that an Application object owns writes its status to the object
// while it changes (the first compare, the sync, Healthy), at most once
// every few seconds, and nothing once it is idle: its polls move only
// reconciledAt. An app no object owns writes nothing.
func (s *appSuite) TestAnObjectsAppWritesItsStatusOnChangeOnly() {
	writes := s.objectWrites(&contract.Owner{Object: "argocd/guestbook"})
	s.Require().GreaterOrEqual(len(writes[0]), 2, "the status changes until Synced and Healthy")
	s.Equal(writes[0], writes[1], "an idle app writes nothing")
	for i, at := range writes[0][1:] {
		s.GreaterOrEqual(at.Sub(writes[0][i]), objectPublishEvery, "writes are %s apart at least", objectPublishEvery)
	}
	s.Empty(s.objectWrites(nil)[1], "an app no object owns writes nothing")
}

// objectWrites runs an automated app with owner for an hour of polls and
// returns the times of its status writes after 10 minutes, and after 60.
func (s *appSuite) objectWrites(owner *contract.Owner) [2][]time.Time {
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1"), MaxReconciles: 1000})
	var mu sync.Mutex
	var at []time.Time
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.ObjectStatusInput) error {
		mu.Lock()
		defer mu.Unlock()
		s.Equal(contract.ObjectStatusInput{App: "guestbook", Object: "argocd/guestbook"}, in)
		at = append(at, s.env.Now())
		return nil
	}, activity.RegisterOptions{Name: contract.ActivityPublishObjectStatus})
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	var out [2][]time.Time
	for i, d := range []time.Duration{10 * time.Minute, 60 * time.Minute} {
		s.env.RegisterDelayedCallback(func() {
			mu.Lock()
			defer mu.Unlock()
			out[i] = append([]time.Time(nil), at...)
		}, d)
	}
	s.deleteAt(61*time.Minute, false)
	in := testApp(true)
	in.Owner = owner
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
	return out
}
