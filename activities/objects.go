package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// ObjectStatus writes apps' status to their Application objects, on the
// queue of the workers that reach the control cluster.
type ObjectStatus struct {
	Client  client.Client
	Objects *appobjects.Objects
}

func (o *ObjectStatus) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(o.PublishObjectStatus, activity.RegisterOptions{Name: contract.ActivityPublishObjectStatus})
}

// PublishObjectStatus writes the app's status, as its status query answers
// now, to its object. An app deleted meanwhile writes nothing.
func (o *ObjectStatus) PublishObjectStatus(ctx context.Context, in contract.ObjectStatusInput) error {
	v, err := ferryclient.Query(ctx, o.Client, in.App)
	if ferryclient.IsAppNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return o.Objects.WriteStatus(ctx, in.Object, &v.Status, nil)
}
