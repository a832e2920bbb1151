package webhook

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRefresher records the refreshes it is asked for.
type fakeRefresher struct {
	mu        sync.Mutex
	apps      []App
	lists     int
	refreshed map[string][]Push
	fail      map[string]error
	// listing, when set, holds each listing until it is closed.
	listing chan struct{}
}

func newFakeRefresher(apps ...App) *fakeRefresher {
	return &fakeRefresher{apps: apps, refreshed: map[string][]Push{}, fail: map[string]error{}}
}

func (f *fakeRefresher) Apps(context.Context) ([]App, error) {
	f.mu.Lock()
	if hold := f.listing; hold != nil {
		f.mu.Unlock()
		<-hold
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	f.lists++
	return slices.Clone(f.apps), nil
}

func (f *fakeRefresher) Refresh(_ context.Context, m Match, p Push) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[m.App]; err != nil {
		return err
	}
	f.refreshed[m.App] = append(f.refreshed[m.App], p)
	return nil
}

func (f *fakeRefresher) count(app string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.refreshed[app])
}

func (f *fakeRefresher) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.refreshed {
		n += len(p)
	}
	return n
}

var testSecrets = map[Provider]string{GitHub: "gh-s3cret", GitLab: "gl-t0ken", Bitbucket: "bb-s3cret", Gitea: "gt-s3cret"}

func newTestReceiver(t *testing.T, opts Options, f *fakeRefresher) (*Receiver, *Metrics) {
	t.Helper()
	if opts.Secrets == nil {
		opts.Secrets = testSecrets
	}
	m := NewMetrics(prometheus.NewRegistry())
	return NewReceiver(opts, f, NewMemoryDeduper(), m), m
}

// run runs the receiver's pool until the test ends.
func run(t *testing.T, r *Receiver) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// signed returns the headers of a correctly signed delivery.
func signed(p Provider, event string, body []byte) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	secret := testSecrets[p]
	switch p {
	case GitHub:
		h.Set("X-GitHub-Event", event)
		h.Set("X-Hub-Signature-256", "sha256="+Sign(secret, body))
	case GitLab:
		h.Set("X-Gitlab-Event", event)
		h.Set("X-Gitlab-Token", secret)
	case Bitbucket:
		h.Set("X-Event-Key", event)
		h.Set("X-Hub-Signature", "sha256="+Sign(secret, body))
	case Gitea:
		// Gitea sends GitHub's headers too, unsigned by GitHub's secret.
		h.Set("X-GitHub-Event", event)
		h.Set("X-Gitea-Event", event)
		h.Set("X-Gitea-Signature", Sign(secret, body))
	}
	return h
}

func deliver(h http.Handler, method string, header http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, Path, bytes.NewReader(body))
	req.Header = header
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func with(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestReceiverAnswers(t *testing.T) {
	gh := fixture(t, "github-push.json")
	big := append(slices.Clone(gh), bytes.Repeat([]byte(" "), 1<<20)...)
	form := []byte("payload=" + url.QueryEscape(string(gh)))
	tests := []struct {
		name     string
		method   string
		header   http.Header
		body     []byte
		unsigned bool // --webhook-allow-unsigned, GitHub secret unset
		want     int
		queued   bool
	}{
		{"GitHub push", "POST", signed(GitHub, "push", gh), gh, false, 202, true},
		{"GitHub push as a form", "POST", with(signed(GitHub, "push", form), "Content-Type", "application/x-www-form-urlencoded"), form, false, 202, true},
		{"GitLab push", "POST", signed(GitLab, "Push Hook", fixture(t, "gitlab-push.json")), fixture(t, "gitlab-push.json"), false, 202, true},
		{"GitLab tag push", "POST", signed(GitLab, "Tag Push Hook", fixture(t, "gitlab-tag-push.json")), fixture(t, "gitlab-tag-push.json"), false, 202, true},
		{"Gitea push", "POST", signed(Gitea, "push", fixture(t, "gitea-push.json")), fixture(t, "gitea-push.json"), false, 202, true},
		{"Bitbucket push", "POST", signed(Bitbucket, "repo:push", fixture(t, "bitbucket-push.json")), fixture(t, "bitbucket-push.json"), false, 202, true},
		{"GitHub ping", "POST", signed(GitHub, "ping", fixture(t, "github-ping.json")), fixture(t, "github-ping.json"), false, 200, false},
		{"GET", "GET", signed(GitHub, "push", gh), nil, false, 405, false},
		{"no event header", "POST", http.Header{}, gh, false, 400, false},
		{"an event Ferry does not handle", "POST", signed(GitHub, "issues", gh), gh, false, 400, false},
		{"malformed", "POST", signed(GitHub, "push", []byte(`{"ref":`)), []byte(`{"ref":`), false, 400, false},
		{"too large", "POST", signed(GitHub, "push", big), big, false, 413, false},
		{"bad GitHub signature", "POST", with(signed(GitHub, "push", gh), "X-Hub-Signature-256", "sha256="+Sign("wrong", gh)), gh, false, 401, false},
		{"GitHub signature not hex", "POST", with(signed(GitHub, "push", gh), "X-Hub-Signature-256", "sha256=zz"), gh, false, 401, false},
		{"GitHub SHA-1 signature", "POST", with(signed(GitHub, "push", gh), "X-Hub-Signature-256", "sha1=abc"), gh, false, 401, false},
		{"unsigned GitHub", "POST", with(signed(GitHub, "push", gh), "X-Hub-Signature-256", ""), gh, false, 401, false},
		{"body changed after signing", "POST", signed(GitHub, "push", gh), append(slices.Clone(gh), ' '), false, 401, false},
		{"bad GitLab token", "POST", with(signed(GitLab, "Push Hook", nil), "X-Gitlab-Token", "gl-t0ke"), fixture(t, "gitlab-push.json"), false, 401, false},
		{"bad Gitea signature", "POST", with(signed(Gitea, "push", nil), "X-Gitea-Signature", Sign("wrong", fixture(t, "gitea-push.json"))), fixture(t, "gitea-push.json"), false, 401, false},
		{"bad Bitbucket signature", "POST", signed(Bitbucket, "repo:push", []byte("other")), fixture(t, "bitbucket-push.json"), false, 401, false},
		{"no secret, no opt-in", "POST", signed(GitHub, "push", gh), gh, false, 401, false},
		{"no secret, opt-in", "POST", http.Header{"X-Github-Event": {"push"}}, gh, true, 202, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := testSecrets
			if tt.unsigned || strings.HasPrefix(tt.name, "no secret") {
				secrets = map[Provider]string{GitLab: "gl-t0ken"}
			}
			r, m := newTestReceiver(t, Options{Secrets: secrets, AllowUnsigned: tt.unsigned}, newFakeRefresher())
			rec := deliver(r, tt.method, tt.header, tt.body)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
			if got := len(r.queue) > 0; got != tt.queued {
				t.Fatalf("queued %v, want %v", got, tt.queued)
			}
			if tt.want == 405 && rec.Header().Get("Allow") != "POST" {
				t.Errorf("405 without Allow: POST")
			}
			if n := testutil.CollectAndCount(m.requests); n != 1 {
				t.Errorf("%d request series, want 1", n)
			}
		})
	}
}

func TestReceiverSignalsMatchingApps(t *testing.T) {
	f := newFakeRefresher(
		App{"shop-https", "https://github.com/Acme/Shop-Config.git"},
		App{"shop-ssh", "git@github.com:acme/shop-config"},
		App{"shop-other", "https://github.com/Acme/Shop-Config-2.git"},
		App{"payments", "https://gitlab.example.com/platform/deploy/payments"},
	)
	r, m := newTestReceiver(t, Options{}, f)
	run(t, r)
	gh := fixture(t, "github-push.json")
	if rec := deliver(r, "POST", signed(GitHub, "push", gh), gh); rec.Code != 202 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	waitFor(t, func() bool { return f.total() == 2 })
	if f.count("shop-https") != 1 || f.count("shop-ssh") != 1 || f.count("shop-other") != 0 || f.count("payments") != 0 {
		t.Fatalf("refreshed %v", f.refreshed)
	}
	if got := f.refreshed["shop-ssh"][0].After; got != "4e2b8d6f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b" {
		t.Fatalf("push after %q", got)
	}
	if got := testutil.ToFloat64(m.signals); got != 2 {
		t.Fatalf("ferry_webhook_refresh_signals_total %v, want 2", got)
	}
}

// TestReceiverSignalsKnownAppsBeforeListing: a push to a repository the
// index knows apps of refreshes them at once, even when the index is due
// for a new listing (one costs seconds on a busy cluster); the apps that
// listing adds are refreshed after it, once each.
func TestReceiverSignalsKnownAppsBeforeListing(t *testing.T) {
	f := newFakeRefresher(App{"shop", "https://github.com/Acme/Shop-Config.git"},
		App{"payments", "https://gitlab.example.com/platform/deploy/payments"})
	r, _ := newTestReceiver(t, Options{}, f)
	run(t, r)
	gh := fixture(t, "github-push.json")
	require.Equal(t, 202, deliver(r, "POST", signed(GitHub, "push", gh), gh).Code)
	waitFor(t, func() bool { return f.count("shop") == 1 })

	f.mu.Lock()
	f.apps = append(f.apps, App{"payments-new", "https://gitlab.example.com/platform/deploy/payments.git"})
	f.listing = make(chan struct{})
	f.mu.Unlock()
	r.index.Invalidate() // due for a listing, as one older than IndexMaxAge
	gl := fixture(t, "gitlab-push.json")
	require.Equal(t, 202, deliver(r, "POST", signed(GitLab, "Push Hook", gl), gl).Code)
	waitFor(t, func() bool { return f.count("payments") == 1 })
	assert.Zero(t, f.count("payments-new"), "not listed yet")
	close(f.listing)
	waitFor(t, func() bool { return f.count("payments-new") == 1 })
	assert.Equal(t, 1, f.count("payments"), "refreshed once")
	assert.Equal(t, 2, f.lists)
}

// TestReceiverDedupe: a thousand copies of one delivery refresh each app once.
func TestReceiverDedupe(t *testing.T) {
	f := newFakeRefresher(App{"shop", "https://github.com/acme/shop-config"})
	r, m := newTestReceiver(t, Options{}, f)
	run(t, r)
	gh := fixture(t, "github-push.json")
	var wg sync.WaitGroup
	codes := make([]int, 1000)
	for i := range codes {
		wg.Go(func() { codes[i] = deliver(r, "POST", signed(GitHub, "push", gh), gh).Code })
	}
	wg.Wait()
	for i, c := range codes {
		if c != 202 {
			t.Fatalf("delivery %d: status %d", i, c)
		}
	}
	waitFor(t, func() bool { return f.total() == 1 })
	time.Sleep(50 * time.Millisecond)
	if f.total() != 1 {
		t.Fatalf("%d refreshes, want 1", f.total())
	}
	if got := testutil.ToFloat64(m.dedupeHits); got != 999 {
		t.Fatalf("ferry_webhook_dedupe_hits_total %v, want 999", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("github", "push", "duplicate")); got != 999 {
		t.Fatalf("duplicate requests %v, want 999", got)
	}
}

// TestReceiverQueueFull: a full queue answers 503 with Retry-After and
// forgets the push, so that the provider's retry is not taken for a repeat.
func TestReceiverQueueFull(t *testing.T) {
	f := newFakeRefresher(App{"payments", "https://gitlab.example.com/platform/deploy/payments"})
	r, _ := newTestReceiver(t, Options{QueueSize: 1, RetryAfter: 7 * time.Second}, f)
	first, second := fixture(t, "gitlab-push.json"), fixture(t, "gitlab-tag-push.json")
	if rec := deliver(r, "POST", signed(GitLab, "Push Hook", first), first); rec.Code != 202 {
		t.Fatalf("first: %d", rec.Code)
	}
	rec := deliver(r, "POST", signed(GitLab, "Tag Push Hook", second), second)
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "7" {
		t.Fatalf("second: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	run(t, r)
	waitFor(t, func() bool { return len(r.queue) == 0 })
	if rec := deliver(r, "POST", signed(GitLab, "Tag Push Hook", second), second); rec.Code != 202 || !strings.Contains(rec.Body.String(), "accepted") {
		t.Fatalf("retry: %d %s", rec.Code, rec.Body)
	}
	waitFor(t, func() bool { return f.count("payments") == 2 })
}

// TestReceiverSignalFailure: a push whose signal failed is forgotten, so a
// redelivery tries again; a vanished app just drops out of the index.
func TestReceiverSignalFailure(t *testing.T) {
	f := newFakeRefresher(App{"edge", "https://git.example.org/infra/edge-proxy"}, App{"gone", "https://git.example.org/infra/edge-proxy"})
	f.fail["edge"] = errors.New("temporal unavailable")
	f.fail["gone"] = ErrAppGone
	r, m := newTestReceiver(t, Options{}, f)
	run(t, r)
	body := fixture(t, "gitea-push.json")
	deliver(r, "POST", signed(Gitea, "push", body), body)
	waitFor(t, func() bool { return testutil.ToFloat64(m.failures.WithLabelValues("signal")) == 1 })
	f.mu.Lock()
	delete(f.fail, "edge")
	f.apps = f.apps[:1]
	f.mu.Unlock()
	waitFor(t, func() bool {
		rec := deliver(r, "POST", signed(Gitea, "push", body), body)
		return strings.Contains(rec.Body.String(), `"accepted"`)
	})
	waitFor(t, func() bool { return f.count("edge") == 1 })
	if testutil.ToFloat64(m.failures.WithLabelValues("signal")) != 1 {
		t.Fatal("ErrAppGone counted as a failure")
	}
}

// TestReceiverDrains: once Run's context ends, queued deliveries are still
// signalled and new ones are refused with 503.
func TestReceiverDrains(t *testing.T) {
	f := newFakeRefresher(App{"shop", "https://github.com/acme/shop-config"})
	r, _ := newTestReceiver(t, Options{}, f)
	for _, name := range []string{"github-push.json", "github-push-tag.json"} {
		body := fixture(t, name)
		deliver(r, "POST", signed(GitHub, "push", body), body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Run(ctx)
	if f.count("shop") != 2 {
		t.Fatalf("%d refreshes after drain, want 2", f.count("shop"))
	}
	body := fixture(t, "github-push-forced.json")
	if rec := deliver(r, "POST", signed(GitHub, "push", body), body); rec.Code != 503 {
		t.Fatalf("after stop: %d", rec.Code)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
