package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/handover"
	"github.com/ferry-gitops/ferry/internal/manifests"
)

// HandOverManifests gives a region worker that does not render the
// target's manifests: loaded here (from the cache, else rendered as the
// app's Render would), checked against the target's digest, and sealed to
// the asking worker's key, so that the history holds no manifest in clear.
func (c *Control) HandOverManifests(ctx context.Context, in contract.HandOverInput) (contract.HandOverResult, error) {
	defer heartbeatEvery(ctx, heartbeatInterval, "hand over")()
	t := in.Target
	check := c.repoCheck(ctx, contract.RenderInput{App: t.App, Project: in.Project})
	loaded, err := loadRendered(ctx, c.Loader, t, check, "on the control worker")
	if err != nil {
		return contract.HandOverResult{}, err
	}
	payload, digest, err := manifests.Encode(loaded.Objects)
	if err != nil || digest != t.Digest {
		return contract.HandOverResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q: the manifests of %.12s encode to digest %.12s, not %.12s (%v)", t.App, t.SHA, digest, t.Digest, err), contract.ErrInvalidManifests, nil)
	}
	sealed, err := handover.Seal(payload, in.PublicKey)
	switch {
	case errors.Is(err, handover.ErrTooLarge):
		return contract.HandOverResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q: its manifests of %.12s cannot go to region %s: %v; serve that region from a worker that is a control worker too (--control), which renders them itself",
			t.App, t.SHA, in.Region, err), contract.ErrInvalidManifests, nil)
	case err != nil:
		return contract.HandOverResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("app %q: seal its manifests for region %s: %v", t.App, in.Region, err),
			contract.ErrInvalidManifests, nil)
	}
	return contract.HandOverResult{Sealed: sealed}, nil
}
