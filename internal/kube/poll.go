package kube

import (
	"context"
	"time"
)

// Poll is the one wait loop of a region's sync and delete: waves becoming
// healthy (and the last one too, when a sync waits for it to settle),
// pruned and replaced objects going, CRDs becoming Established, hooks
// ending (internal/hooks) and a cascading delete all wait through it.
// It calls check at once and then every interval until check reports done
// or an error, or ctx ends (ctx's error then: no check runs after it). A
// check keeps its own deadline, so that its timeout error can say what it
// was waiting for.
func Poll(ctx context.Context, interval time.Duration, check func(ctx context.Context) (done bool, err error)) error {
	for {
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
