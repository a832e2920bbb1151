package main

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
)

// regionWorkers are the Temporal workers of one region, the same activities
// on each: one on the region's queue, one on its urgent queue
// (contract.UrgentRegionQueue), each with pollers and slots of its own, so
// that a user's sync, a push or a drift to heal does not wait for a slot
// that the region's routine work (a mass onboarding's first syncs, the
// polls' compares) holds.
func regionWorkers(c client.Client, region string, opts worker.Options, register func(worker.Registry)) []worker.Worker {
	queues := []string{contract.RegionQueue(region), contract.UrgentRegionQueue(region)}
	ws := make([]worker.Worker, len(queues))
	for i, q := range queues {
		ws[i] = worker.New(c, q, opts)
		register(ws[i])
	}
	return ws
}

// startAll starts ws; when one fails, it stops those it started.
func startAll(ws []worker.Worker) error {
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, s := range ws[:i] {
				s.Stop()
			}
			return err
		}
	}
	return nil
}
