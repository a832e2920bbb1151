package workflows

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// An app that an Application object owns (Owner.Object) writes its status
// back to the object. No recorded run has such an owner, so this path
// needs no version: it adds commands only to runs that take it.
const (
	// objectPublishEvery: an app writes its object's status at most this often.
	objectPublishEvery = 3 * time.Second
	// objectPublishTimeout: how long a write waits for a worker of the
	// control cluster; the next change of status tries again.
	objectPublishTimeout = 2 * time.Minute
)

// objectPublish is what one run knows of the writes to the app's object.
type objectPublish struct {
	// running: a write, or the wait before it, is under way.
	running bool
	// at is when the last write began.
	at time.Time
}

// publishObject writes the app's status to its Application object when it
// changed since the last write, in a goroutine of the workflow: the app
// goes on meanwhile, and the changes made while a write runs or waits are
// written together by the next.
func (s *appState) publishObject(ctx workflow.Context) {
	if s.Owner == nil || s.Owner.Object == "" || s.object.running || s.objectDigest() == s.ObjectPublished {
		return
	}
	s.object.running = true
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() { s.object.running = false }()
		for {
			digest := s.objectDigest()
			if digest == s.ObjectPublished {
				return
			}
			if wait := s.object.at.Add(objectPublishEvery).Sub(workflow.Now(ctx)); wait > 0 {
				if err := workflow.Sleep(ctx, wait); err != nil {
					return
				}
				continue
			}
			s.object.at = workflow.Now(ctx)
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				Summary:                "Status to " + s.Owner.Object,
				TaskQueue:              contract.ObjectQueue,
				ScheduleToCloseTimeout: objectPublishTimeout,
				StartToCloseTimeout:    30 * time.Second,
				RetryPolicy:            activityRetry(0),
			})
			in := contract.ObjectStatusInput{App: s.app.Metadata.Name, Object: s.Owner.Object}
			if err := workflow.ExecuteActivity(actx, contract.ActivityPublishObjectStatus, in).Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("status not written to the Application object", "object", in.Object, "error", err)
				return
			}
			s.ObjectPublished = digest
		}
	})
}

// awaitObjectPublished waits for the write under way, so that the next
// run does not write the same status again.
func (s *appState) awaitObjectPublished(ctx workflow.Context) {
	_ = workflow.Await(ctx, func() bool { return !s.object.running })
}

// objectDigest stands for the status an object shows, but for
// reconciledAt: every poll moves it, and an idle app writes nothing.
func (s *appState) objectDigest() string {
	st := s.view().Status
	st.ReconciledAt = nil
	b, _ := json.Marshal(st) // a struct of plain values: it always encodes
	h := fnv.New128a()
	h.Write(b)
	return fmt.Sprintf("%x", h.Sum(nil))
}
