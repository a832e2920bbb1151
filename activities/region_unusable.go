package activities

import (
	"context"
	"encoding/json"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
)

// Unusable answers the activities of a region that cannot be connected to
// at all (a cluster Secret whose config does not hold: a CA that is no
// PEM, a certificate without its key): each fails at once, not retried,
// as Unreachable with the reason, so the region's apps show why, while
// the other regions sync.
type Unusable struct {
	Name string
	// Reason names the Secret and its fields that are wrong; no value.
	Reason error
}

// Register adds the region queue's activities, each failing with the reason.
func (u *Unusable) Register(w worker.Registry) {
	for _, name := range []string{contract.ActivityCompare, contract.ActivitySync, contract.ActivityDeleteResources,
		contract.ActivityRunHooks, contract.ActivityDeleteHooks, contract.ActivitySyncWithHooks} {
		w.RegisterActivityWithOptions(u.fail, activity.RegisterOptions{Name: name})
	}
}

func (u *Unusable) fail(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, temporal.NewNonRetryableApplicationError("Unreachable: region "+u.Name+": "+u.Reason.Error(), contract.ErrUnreachable, nil)
}
