package workflows

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/appset"
)

func (s *appSetState) registerHandlers(ctx workflow.Context) error {
	if err := registerStatusAndRefresh(ctx, func() (contract.AppSetView, error) { return s.view(), nil }, s.onRefresh); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateAppSetSpec, s.handleSpec,
		workflow.UpdateHandlerOptions{Validator: s.validateSpec}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateAppSetDelete, s.handleDelete,
		workflow.UpdateHandlerOptions{Validator: s.validateDelete})
}

func (s *appSetState) view() contract.AppSetView {
	return contract.AppSetView{ApplicationSet: s.set, Status: s.Status}
}

// onRefresh: a push (from the webhook, for one of the set's repositories)
// or `ferry appset refresh` runs the generators now, with the repositories'
// refs listed anew.
func (s *appSetState) onRefresh(req contract.RefreshRequest) {
	if req.Drift != nil {
		return // an app's drift is the app's business
	}
	if s.refresh == nil {
		s.refresh = &refreshReq{}
	}
	s.refresh.Hard = true
}

func (s *appSetState) errDeleting() error {
	return fmt.Errorf("applicationset %q is being deleted: wait for the delete to finish", s.set.Metadata.Name)
}

// validateSpec refuses a new spec before it is accepted: read as strictly
// as `ferry appset apply` reads a file, and not renamed.
func (s *appSetState) validateSpec(ctx workflow.Context, raw json.RawMessage) error {
	if s.deletion != nil {
		return s.errDeleting()
	}
	next, err := appset.Read(raw)
	if err != nil {
		return err
	}
	if next.Metadata.Name != s.set.Metadata.Name {
		return fmt.Errorf("applicationset %q: the spec update names applicationset %q: a set cannot be renamed; apply it as a new set",
			s.set.Metadata.Name, next.Metadata.Name)
	}
	return nil
}

func (s *appSetState) handleSpec(ctx workflow.Context, raw json.RawMessage) (contract.AppSetView, error) {
	next, err := appset.Read(raw) // a replay runs no validator
	if err != nil {
		return contract.AppSetView{}, err
	}
	s.set = *next
	if s.refresh == nil {
		s.refresh = &refreshReq{}
	}
	return s.view(), nil
}

func (s *appSetState) validateDelete(ctx workflow.Context, _ contract.DeleteAppSetRequest) error {
	if s.deletion != nil {
		return s.errDeleting()
	}
	return nil
}

// handleDelete deletes the set's apps, then the set; it answers once
// they are gone.
func (s *appSetState) handleDelete(ctx workflow.Context, _ contract.DeleteAppSetRequest) error {
	p := &pendingAppSetDelete{}
	s.deletion = p
	if err := workflow.Await(ctx, func() bool { return p.done }); err != nil {
		return err
	}
	return p.err
}
