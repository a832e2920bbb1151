package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Options configure a Receiver.
type Options struct {
	// Secrets are the providers' webhook secrets (GitLab: the token).
	Secrets map[Provider]string
	// AllowUnsigned accepts deliveries from providers without a secret in
	// Secrets. Off, such deliveries are refused with 401.
	AllowUnsigned bool
	// MaxBodyBytes is the largest delivery read; larger ones get 413.
	MaxBodyBytes int64
	// DedupeTTL is how long a push (repo, ref, after) counts as seen.
	DedupeTTL time.Duration
	// Workers process accepted deliveries: find the apps, signal them.
	Workers int
	// QueueSize is how many accepted deliveries may wait for a worker;
	// when it is full a delivery gets 503 with Retry-After.
	QueueSize int
	// RetryAfter is what a 503 asks the provider to wait.
	RetryAfter time.Duration
	// SignalConcurrency bounds the signals in flight across all workers.
	SignalConcurrency int
	// SignalTimeout bounds one signal.
	SignalTimeout time.Duration
	// IndexMaxAge and IndexMinAge: see Index.
	IndexMaxAge, IndexMinAge time.Duration
	// DrainTimeout is how long queued deliveries get once Run's context ends.
	DrainTimeout time.Duration
	// Logger logs failures; nil: slog.Default().
	Logger *slog.Logger
}

// DefaultOptions are the options ferry-worker uses.
func DefaultOptions() Options {
	return Options{
		MaxBodyBytes: 1 << 20, DedupeTTL: 5 * time.Minute,
		Workers: 4, QueueSize: 256, RetryAfter: 10 * time.Second,
		SignalConcurrency: 16, SignalTimeout: 10 * time.Second,
		IndexMaxAge: 10 * time.Second, IndexMinAge: time.Second,
		DrainTimeout: 5 * time.Second,
	}
}

// Receiver is the webhook endpoint: an http.Handler that verifies and
// queues pushes, and (in Run) a pool that signals the apps.
type Receiver struct {
	opts      Options
	refresher Refresher
	dedupe    Deduper
	metrics   *Metrics
	index     *Index
	log       *slog.Logger
	queue     chan delivery
	signals   *semaphore.Weighted
	stopping  atomic.Bool
}

// delivery is an accepted delivery's new pushes and their dedupe keys.
type delivery struct {
	pushes []Push
	keys   []string
}

// NewReceiver returns a receiver; its pool runs in Run.
func NewReceiver(opts Options, r Refresher, d Deduper, m *Metrics) *Receiver {
	def := DefaultOptions()
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = def.MaxBodyBytes
	}
	if opts.DedupeTTL <= 0 {
		opts.DedupeTTL = def.DedupeTTL
	}
	if opts.Workers <= 0 {
		opts.Workers = def.Workers
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = def.QueueSize
	}
	if opts.SignalConcurrency <= 0 {
		opts.SignalConcurrency = def.SignalConcurrency
	}
	if opts.SignalTimeout <= 0 {
		opts.SignalTimeout = def.SignalTimeout
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = def.DrainTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Receiver{
		opts: opts, refresher: r, dedupe: d, metrics: m, log: opts.Logger,
		index:   NewIndex(r.Apps, opts.IndexMaxAge, opts.IndexMinAge),
		queue:   make(chan delivery, opts.QueueSize),
		signals: semaphore.NewWeighted(int64(opts.SignalConcurrency)),
	}
}

// Results of a delivery, as ferry_webhook_requests_total shows them.
const (
	resultAccepted     = "accepted"
	resultDuplicate    = "duplicate"
	resultIgnored      = "ignored"
	resultBadMethod    = "method_not_allowed"
	resultMalformed    = "malformed"
	resultUnknownEvent = "unknown_event"
	resultTooLarge     = "too_large"
	resultUnauthorized = "unauthorized"
	resultUnavailable  = "unavailable"
)

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.reply(w, http.StatusMethodNotAllowed, "none", eventNone, resultBadMethod, "only POST is accepted")
		return
	}
	p, event := detect(req.Header)
	if p == nil {
		r.reply(w, http.StatusBadRequest, "none", eventNone, resultUnknownEvent,
			"no provider event header: expected X-GitHub-Event, X-Gitlab-Event, X-Event-Key (Bitbucket Cloud) or X-Gitea-Event")
		return
	}
	prov, label := string(p.name), p.eventLabel(event)
	if err := checkHeaders(p, event, req.Header); err != nil {
		r.reply(w, http.StatusBadRequest, prov, label, resultMalformed, fmt.Sprintf("%s delivery refused: %v", prov, err))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.opts.MaxBodyBytes))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			r.reply(w, http.StatusRequestEntityTooLarge, prov, label, resultTooLarge,
				fmt.Sprintf("the body is larger than %d bytes", r.opts.MaxBodyBytes))
			return
		}
		r.reply(w, http.StatusBadRequest, prov, label, resultMalformed, "reading the body: "+err.Error())
		return
	}
	unsigned, msg := r.verify(p, req.Header, body)
	if msg != "" {
		r.reply(w, http.StatusUnauthorized, prov, label, resultUnauthorized, msg)
		return
	}
	switch label {
	case eventPing:
		r.reply(w, http.StatusOK, prov, label, resultIgnored, "pong: nothing to refresh")
		return
	case eventOther:
		r.reply(w, http.StatusBadRequest, prov, label, resultUnknownEvent,
			fmt.Sprintf("%s event %q is not handled: send push events (and tag pushes) only", prov, event))
		return
	}
	payload, err := jsonPayload(req.Header.Get("Content-Type"), body)
	if err == nil {
		err = checkBody(p, event, payload)
	}
	if err == nil {
		var pushes []Push
		if pushes, err = p.parse(payload); err == nil {
			if unsigned {
				pushes = unverified(pushes)
			}
			r.accept(req.Context(), w, prov, label, pushes, unsigned)
			return
		}
	}
	r.reply(w, http.StatusBadRequest, prov, label, resultMalformed, fmt.Sprintf("%s %s: %v", prov, event, err))
}

// verify returns why a delivery is refused, or ""; unsigned is true when
// it is accepted without a secret (AllowUnsigned).
func (r *Receiver) verify(p *provider, h http.Header, body []byte) (unsigned bool, refused string) {
	secret := r.opts.Secrets[p.name]
	if secret == "" {
		if r.opts.AllowUnsigned {
			return true, ""
		}
		return false, fmt.Sprintf("no %s webhook secret is configured: set FERRY_WEBHOOK_%s_SECRET on the worker "+
			"(or start it with --webhook-allow-unsigned)", p.name, envProvider(p.name))
	}
	if err := p.verify(secret, h, body); err != nil {
		return false, fmt.Sprintf("%s delivery refused: %v", p.name, err)
	}
	return false, ""
}

// unverified drops what an unsigned delivery claims beyond "this ref of
// this repository moved": its list of changed files, which would let a
// push skip rendering the apps whose manifest-generate-paths it did not
// touch. Anyone may send it, so every app of the ref renders again; the
// revision itself is always read from Git.
func unverified(pushes []Push) []Push {
	for i := range pushes {
		pushes[i].Paths = nil
	}
	return pushes
}

// accept dedupes the pushes and queues the new ones. Unsigned pushes are
// deduplicated apart from signed ones (and from the repo poll's), so that
// one cannot make a genuine push of the same SHA count as a repeat.
func (r *Receiver) accept(ctx context.Context, w http.ResponseWriter, prov, label string, pushes []Push, unsigned bool) {
	fresh, queued := r.admit(ctx, pushes, unsigned)
	switch {
	case fresh == 0:
		r.reply(w, http.StatusAccepted, prov, label, resultDuplicate, "already delivered: nothing new to refresh")
	case !queued:
		w.Header().Set("Retry-After", strconv.Itoa(int(r.opts.RetryAfter.Seconds())))
		r.reply(w, http.StatusServiceUnavailable, prov, label, resultUnavailable, "too many deliveries queued: retry later")
	default:
		r.reply(w, http.StatusAccepted, prov, label, resultAccepted,
			fmt.Sprintf("%d push(es) queued: the apps tracking the repository will refresh", fresh))
	}
}

// admit dedupes pushes and queues the fresh ones (not seen within
// DedupeTTL) as one delivery; queued is false when the queue had no room,
// and then they are forgotten, so that they are fresh again next time.
func (r *Receiver) admit(ctx context.Context, pushes []Push, unsigned bool) (fresh int, queued bool) {
	var d delivery
	for _, p := range pushes {
		key := dedupeKey(p)
		if unsigned {
			key = "unsigned:" + key
		}
		isNew, err := r.dedupe.FirstSeen(ctx, key, r.opts.DedupeTTL)
		if err != nil {
			r.log.Warn("webhook dedupe failed: treating the push as new", "ref", p.Ref, "error", err)
			isNew = true
		}
		if !isNew {
			r.metrics.dedupeHits.Inc()
			continue
		}
		d.pushes, d.keys = append(d.pushes, p), append(d.keys, key)
	}
	if len(d.pushes) == 0 {
		return 0, true
	}
	if !r.enqueue(d) {
		for _, k := range d.keys {
			r.dedupe.Forget(context.WithoutCancel(ctx), k)
		}
		return len(d.pushes), false
	}
	return len(d.pushes), true
}

func (r *Receiver) enqueue(d delivery) bool {
	if r.stopping.Load() {
		return false
	}
	select {
	case r.queue <- d:
		return true
	default:
		return false
	}
}

// reply answers with a small JSON body and counts the request.
func (r *Receiver) reply(w http.ResponseWriter, code int, prov, event, result, msg string) {
	r.metrics.requests.WithLabelValues(prov, event, result).Inc()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(struct {
		Result  string `json:"result"`
		Message string `json:"message"`
	}{result, msg})
}

func envProvider(p Provider) string {
	return map[Provider]string{GitHub: "GITHUB", GitLab: "GITLAB", Bitbucket: "BITBUCKET", Gitea: "GITEA"}[p]
}
