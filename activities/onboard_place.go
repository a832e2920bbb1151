package activities

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/ferry-gitops/ferry/contract"
)

// givesPlaceOnWait returns what a region's run calls each time it waits
// rather than writes (a wave's health, a hook): the first call gives the
// new app's place at the onboarding gate back (contract.SyncInput's
// OnboardPlace), so that another new app writes meanwhile. The gate
// bounds the apps that write their first objects at once; an app that
// waits for its cluster costs the workers nothing. A run that holds no
// place gives nothing back.
func givesPlaceOnWait(ctx context.Context, place string) func() {
	if place == "" {
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			err := activity.GetClient(ctx).SignalWorkflow(sctx, contract.OnboardGateID, "", contract.SignalOnboardDone,
				contract.OnboardRequest{App: place})
			if err != nil {
				// The place frees itself when the app's first sync ends,
				// or with the gate's lease.
				slog.Warn("onboarding gate: cannot give the place back while waiting", "app", place, "error", err)
			}
		})
	}
}
