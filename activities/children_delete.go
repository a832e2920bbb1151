package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/contract"
)

// DeleteChildren deletes the child apps an app of apps created, as its
// cascading delete does in Argo CD: each child is deleted by its parent,
// and its own resources finalizer decides whether its resources go too
// (and a child that is an app of apps cascades to its own children the
// same way). It returns once every child's delete is done. A child that
// another owner took over meanwhile is left alone and reported Refused; a
// child whose delete failed is kept, and the activity fails so that it is
// tried again.
func (c *Children) DeleteChildren(ctx context.Context, in contract.ChildrenInput) (contract.DeleteChildrenResult, error) {
	stop := heartbeatEvery(ctx, heartbeatInterval, "delete child apps")
	defer stop()
	var (
		mu   sync.Mutex
		out  contract.DeleteChildrenResult
		errs []error
		wg   sync.WaitGroup
	)
	for _, name := range in.Previous {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.deleteChildAndWait(ctx, in.Parent, name)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				out.Deleted = append(out.Deleted, name)
			case contract.IsOwnerRefusal(err):
				out.Refused = append(out.Refused, name)
			default:
				out.Kept = append(out.Kept, name)
				errs = append(errs, fmt.Errorf("app %q: delete child app %q: %s", in.Parent, name, contract.ErrorMessage(err)))
			}
		}()
	}
	wg.Wait()
	return out, classify(errors.Join(errs...))
}

// deleteChildAndWait deletes the child; when its delete is under way
// already (an earlier attempt of this activity, or its user), it waits for
// that one to end.
func (c *Children) deleteChildAndWait(ctx context.Context, parent, name string) error {
	if c.Objects != nil {
		return c.deleteChildObject(ctx, parent, name, true)
	}
	for {
		err := c.deleteChild(ctx, parent, name)
		if err == nil || !strings.Contains(err.Error(), contract.ErrDeleting.Error()) {
			return err
		}
		// Its workflow ends once that delete succeeds; if it fails, the
		// child stays and is deleted again here.
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		_ = c.Client.GetWorkflow(wait, contract.WorkflowID(name), "").Get(wait, nil)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
