package webhook

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// Polled is the Provider of the pushes a Poller finds.
const Polled Provider = "poll"

// RefLister lists a repository's refs: gitsource.Repos.ListRefs.
type RefLister interface {
	ListRefs(ctx context.Context, repoURL string) (gitsource.Refs, error)
}

// Poller polls the repositories the running apps track, one ls-remote a
// repository every Interval however many apps track it, and hands the
// branches and tags that moved since its last listing to the Receiver as
// pushes, as a provider's webhook would: the apps that track them refresh
// at once, so that an app's own poll can wait for its safety interval
// instead (workflows.Config.RepoPollInterval). A repository first seen has
// nothing to compare with: its listing is the start, and its apps, which
// compare after any worker restart anyway, find what moved while no worker
// polled on their own next poll.
type Poller struct {
	// Interval is the time between two listings of a repository.
	Interval time.Duration
	// Refs lists a repository's refs.
	Refs RefLister
	// Concurrency bounds the listings under way at once (default 4).
	Concurrency int
	// Logger: nil is slog.Default().
	Logger *slog.Logger

	receiver *Receiver
	mu       sync.Mutex
	last     map[string]gitsource.Refs // by repo key
}

// NewPoller polls for r's apps every interval.
func NewPoller(r *Receiver, refs RefLister, interval time.Duration) *Poller {
	return &Poller{Interval: interval, Refs: refs, receiver: r, last: map[string]gitsource.Refs{}}
}

// Run polls every Interval until ctx ends, the first round at once.
func (p *Poller) Run(ctx context.Context) {
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		p.Round(ctx)
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// Round lists every tracked repository once and queues what moved.
func (p *Poller) Round(ctx context.Context) {
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	repos, err := p.receiver.index.Repos(ctx)
	if err != nil {
		p.receiver.metrics.failures.WithLabelValues("lookup").Inc()
		log.Error("repo poll: listing the apps failed", "error", err)
		return
	}
	n := p.Concurrency
	if n <= 0 {
		n = 4
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, key := range slices.Sorted(maps.Keys(repos)) {
		apps := repos[key]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p.poll(ctx, log, key, apps)
		})
	}
	wg.Wait()
	p.forgetGone(repos)
}

// poll lists one repository and queues its moved refs.
func (p *Poller) poll(ctx context.Context, log *slog.Logger, key string, apps []App) {
	var urls []string
	for _, a := range apps {
		if !slices.Contains(urls, a.RepoURL) {
			urls = append(urls, a.RepoURL)
		}
	}
	slices.Sort(urls)
	refs, err := p.Refs.ListRefs(ctx, urls[0])
	if err != nil {
		p.receiver.metrics.failures.WithLabelValues("poll").Inc()
		log.Warn("repo poll: ls-remote failed", "repo", gitsource.RedactURL(urls[0]), "error", err)
		return
	}
	p.mu.Lock()
	prev, seen := p.last[key]
	p.last[key] = refs
	p.mu.Unlock()
	if !seen {
		return
	}
	pushes := moved(prev, refs, urls)
	if len(pushes) == 0 {
		return
	}
	if _, queued := p.receiver.admit(ctx, pushes, false); !queued {
		// The next round sees the same change again.
		p.mu.Lock()
		p.last[key] = prev
		p.mu.Unlock()
		log.Warn("repo poll: the refresh queue is full; the next round retries", "repo", gitsource.RedactURL(urls[0]))
		return
	}
	log.Info("repo poll: refs moved", "repo", gitsource.RedactURL(urls[0]), "refs", len(pushes))
}

// forgetGone drops the listings of repositories no app tracks any more.
func (p *Poller) forgetGone(repos map[string][]App) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key := range p.last {
		if _, ok := repos[key]; !ok {
			delete(p.last, key)
		}
	}
}

// moved is a push for every ref of now that is new or at another commit
// than in before, and for every ref of before that is gone.
func moved(before, now gitsource.Refs, urls []string) []Push {
	var out []Push
	push := func(ref, from, to string) {
		out = append(out, Push{Provider: Polled, RepoURLs: urls, Ref: ref, Before: from, After: to,
			DefaultBranch: ref == now.Head || now.Head == "" && ref == before.Head})
	}
	for _, ref := range slices.Sorted(maps.Keys(now.Commits)) {
		if sha := now.Commits[ref]; before.Commits[ref] != sha {
			push(ref, before.Commits[ref], sha)
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(before.Commits)) {
		if _, ok := now.Commits[ref]; !ok {
			push(ref, before.Commits[ref], "")
		}
	}
	return out
}
