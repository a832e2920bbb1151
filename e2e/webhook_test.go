package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

const webhookSecret = "e2e-webhook-s3cret"

// hook posts deliveries to a worker's webhook.
type hook struct {
	t    *testing.T
	url  string
	repo *gitRepo
}

// githubPush is a push event as GitHub sends it for the repo.
func (h *hook) githubPush(before, after string, paths ...string) []byte {
	body, err := json.Marshal(map[string]any{
		"ref": "refs/heads/main", "before": before, "after": after, "created": false, "deleted": false, "forced": false,
		"commits": []map[string]any{{"id": after, "distinct": true, "message": "e2e", "added": paths,
			"modified": []string{}, "removed": []string{}}},
		"repository": map[string]any{"name": h.repo.Name, "full_name": "e2e/" + h.repo.Name, "clone_url": h.repo.URL,
			"html_url": h.repo.URL, "default_branch": "main"},
		"pusher": map[string]any{"name": "ferry-e2e"},
	})
	require.NoError(h.t, err)
	return body
}

// post delivers body as a GitHub push event signed with secret, and returns the status.
func (h *hook) post(method, secret string, body []byte) int {
	req, err := http.NewRequest(method, h.url, bytes.NewReader(body))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/e2e")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+webhook.Sign(secret, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestWebhook: with a 3-minute poll, a push followed by a signed GitHub
// delivery syncs the app in every region within seconds; a bad signature,
// a malformed or oversized body and a GET are refused and signal nothing;
// 1,000 copies of a delivery refresh the app once.
func TestWebhook(t *testing.T) {
	metricsAddr, hookAddr := freeAddr(t), freeAddr(t)
	startWorkerEnv(t, []string{"FERRY_WEBHOOK_GITHUB_SECRET=" + webhookSecret},
		// The repository poll off: this test's refreshes are the webhook's.
		"--metrics-addr", metricsAddr, "--webhook-addr", hookAddr, "--repo-poll-interval", "0")
	repo := newRepo(t, "webhook-guestbook")
	repo.copyDir(filepath.Join(corpus, "guestbook"), "guestbook")
	sha1 := repo.commitAndPush("guestbook")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("webhook-guestbook", repo.URL, "guestbook", "webhook-guestbook", true, "3m")))
	waitApp(t, "webhook-guestbook", sha1, 3*time.Minute)

	h := &hook{t: t, url: "http://" + hookAddr + webhook.Path, repo: repo}
	c := temporalClient(t)
	metric := func(name string) float64 { return metricValue(scrape(t, metricsAddr), name) }
	eventually(t, 30*time.Second, "webhook up", func() (bool, string) {
		resp, err := http.Get(h.url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusMethodNotAllowed, resp.Status
	})

	// A push, then its delivery.
	repo.write(map[string]string{"guestbook/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  k: v\n"})
	sha2 := repo.commitAndPush("add a ConfigMap")
	delivery := h.githubPush(sha1, sha2, "guestbook/extra.yaml")
	start := time.Now()
	require.Equal(t, http.StatusAccepted, h.post("POST", webhookSecret, delivery))
	t.Logf("delivery → Synced at %s in %d regions: %s", short(sha2), len(regions), waitSynced(t, c, "webhook-guestbook", sha2, start))
	require.Equal(t, 1.0, metric("ferry_webhook_refresh_signals_total"))

	// The same delivery again: 202, counted as a dedupe hit, nothing signalled.
	require.Equal(t, http.StatusAccepted, h.post("POST", webhookSecret, delivery))
	require.Equal(t, 1.0, metric("ferry_webhook_dedupe_hits_total"))

	// A push whose deliveries are refused: nothing moves.
	repo.write(map[string]string{"guestbook/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  k: v2\n"})
	sha3 := repo.commitAndPush("change the ConfigMap")
	bad := h.githubPush(sha2, sha3)
	require.Equal(t, http.StatusUnauthorized, h.post("POST", "not-the-secret", bad))
	require.Equal(t, http.StatusBadRequest, h.post("POST", webhookSecret, []byte(`{"ref": "refs/heads/main", "after": `)))
	require.Equal(t, http.StatusRequestEntityTooLarge, h.post("POST", webhookSecret, append(bad, bytes.Repeat([]byte(" "), 2<<20)...)))
	require.Equal(t, http.StatusMethodNotAllowed, h.post("GET", webhookSecret, nil))
	time.Sleep(3 * time.Second)
	v, err := queryView(t, c, "webhook-guestbook")
	require.NoError(t, err)
	require.Equal(t, sha2, v.Status.Sync.Revision, "a refused delivery refreshed the app")
	require.Equal(t, 1.0, metric("ferry_webhook_refresh_signals_total"))
	signalsBefore := refreshSignals(t, c, "webhook-guestbook")

	// 1,000 copies of the correctly signed delivery: one refresh.
	good := h.githubPush(sha2, sha3)
	codes := make([]int, 1000)
	var wg sync.WaitGroup
	work := make(chan int)
	start = time.Now()
	for range 32 {
		wg.Go(func() {
			for i := range work {
				codes[i] = h.post("POST", webhookSecret, good)
			}
		})
	}
	for i := range codes {
		work <- i
	}
	close(work)
	wg.Wait()
	t.Logf("1,000 deliveries answered in %s", time.Since(start).Round(time.Millisecond))
	for i, code := range codes {
		require.Equal(t, http.StatusAccepted, code, "delivery %d", i)
	}
	t.Logf("delivery → Synced at %s in %d regions: %s (1,000 copies)", short(sha3), len(regions), waitSynced(t, c, "webhook-guestbook", sha3, start))
	require.Equal(t, 2.0, metric("ferry_webhook_refresh_signals_total"))
	require.Equal(t, 1.0+999, metric("ferry_webhook_dedupe_hits_total"))
	require.Equal(t, signalsBefore+1, refreshSignals(t, c, "webhook-guestbook"), "refresh signals in the app's history")
	m := scrape(t, metricsAddr)
	for _, want := range []string{
		`ferry_webhook_requests_total{event="push",provider="github",result="accepted"} 2`,
		`ferry_webhook_requests_total{event="push",provider="github",result="duplicate"} 1000`,
		`ferry_webhook_requests_total{event="push",provider="github",result="unauthorized"} 1`,
		`ferry_webhook_requests_total{event="push",provider="github",result="malformed"} 1`,
		`ferry_webhook_requests_total{event="push",provider="github",result="too_large"} 1`,
		`ferry_webhook_requests_total{event="none",provider="none",result="method_not_allowed"} 2`,
	} {
		require.Contains(t, m, want)
	}
	recordHistories(t, "webhook-guestbook")
	mustFerry(t, "app", "delete", "webhook-guestbook", "--cascade")
}

// waitSynced waits until the app is Synced and Healthy at sha in every
// region, polling often, and returns the time since start.
func waitSynced(t *testing.T, c client.Client, name, sha string, start time.Time) time.Duration {
	t.Helper()
	deadline := start.Add(time.Minute) // the poll would come after 3 minutes
	last := ""
	for time.Now().Before(deadline) {
		v, err := queryView(t, c, name)
		if err == nil {
			ok := v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy
			for _, r := range regions {
				ok = ok && v.Status.Regions[r].Sync == app.SyncStatusSynced && v.Status.Regions[r].Revision == sha
			}
			if ok {
				return time.Since(start).Round(time.Millisecond)
			}
			last = fmt.Sprintf("%s/%s at %s, regions %+v", v.Status.Sync.Status, v.Status.Health.Status, short(v.Status.Sync.Revision), v.Status.Regions)
		} else {
			last = err.Error()
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("app %s not Synced at %s a minute after the delivery; last state: %s", name, short(sha), last)
	return 0
}

// refreshSignals counts the refresh signals in the app's runs.
func refreshSignals(t *testing.T, c client.Client, name string) int {
	t.Helper()
	n := 0
	for _, ev := range events(t, c, name) {
		if s := ev.GetWorkflowExecutionSignaledEventAttributes(); s != nil && s.GetSignalName() == contract.SignalRefresh {
			n++
		}
	}
	return n
}

// metricValue reads an unlabelled sample from Prometheus text; -1 if absent.
func metricValue(text, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}
