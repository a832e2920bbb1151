package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
)

// workersTTL is how long the control worker reuses what it learnt of a
// region queue's workers: every app polling in that time shares one
// DescribeTaskQueue call.
const workersTTL = 5 * time.Second

// workersCache remembers, per region, the last digest of its workers.
type workersCache struct {
	mu      sync.Mutex
	entries map[string]workersEntry
}

type workersEntry struct {
	digest string
	at     time.Time
}

// regionWorkers tells who serves each region's task queue: a digest of the
// identities of the workers polling it for activities (empty when it cannot
// be told). Temporal lists a poller for some minutes after its last poll,
// so a region worker that restarts changes the digest twice: when the new
// one shows and when the old one is dropped. Worker identities carry a
// start id (ferry-worker sets it), so a restart in the same pod is a new
// identity too.
func (c *Control) regionWorkers(ctx context.Context, regions []string) map[string]string {
	if len(regions) == 0 || !activity.IsActivity(ctx) {
		return nil
	}
	out := make(map[string]string, len(regions))
	for _, region := range regions {
		out[region] = c.workers.digest(ctx, region)
	}
	return out
}

func (wc *workersCache) digest(ctx context.Context, region string) string {
	wc.mu.Lock()
	e, ok := wc.entries[region]
	wc.mu.Unlock()
	if ok && time.Since(e.at) < workersTTL {
		return e.digest
	}
	resp, err := activity.GetClient(ctx).DescribeTaskQueue(ctx, contract.RegionQueue(region), enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		slog.Warn("region workers: cannot describe the task queue; the app compares", "region", region, "error", err)
		return ""
	}
	var ids []string
	for _, p := range resp.GetPollers() {
		ids = append(ids, p.GetIdentity())
	}
	digest := ""
	if len(ids) > 0 {
		slices.Sort(ids)
		h := sha256.New()
		for _, id := range slices.Compact(ids) {
			h.Write([]byte(id))
			h.Write([]byte{0})
		}
		digest = hex.EncodeToString(h.Sum(nil))[:16]
	}
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.entries == nil {
		wc.entries = map[string]workersEntry{}
	}
	wc.entries[region] = workersEntry{digest: digest, at: time.Now()}
	return digest
}
