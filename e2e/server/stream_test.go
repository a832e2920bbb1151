package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestStreamUpdateAndEvents: the stream of apps first sends each app the
// caller may get, then, asked for, the BOOKMARK that ends them, then a
// sync's change; a PUT of the app writes its
// Application object; the app's events are the object's, who synced it
// among them.
func TestStreamUpdateAndEvents(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm, namespace: argocd}\ndata: {}\n", "apply", "-f", "-")
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	teamApps(t, e, s, admin, map[string]string{"team-d": ""})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/v1/stream/applications?projects=team-d&allowWatchBookmarks=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+admin)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev struct {
					Result struct {
						Type        string
						Application struct {
							Metadata struct{ Name string }
							Status   struct{ OperationState *struct{ Phase string } }
						}
					}
				}
				if json.Unmarshal([]byte(data), &ev) == nil {
					op := ""
					if st := ev.Result.Application.Status.OperationState; st != nil {
						op = st.Phase
					}
					events <- ev.Result.Type + " " + ev.Result.Application.Metadata.Name + " " + op
				}
			}
		}
		close(events)
	}()
	next := func(what string, ok func(string) bool) {
		t.Helper()
		for {
			select {
			case ev, open := <-events:
				require.True(t, open, "the stream ended before %s", what)
				if ok(ev) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no event: %s", what)
			}
		}
	}
	next("the app as it is", func(ev string) bool { return strings.HasPrefix(ev, "ADDED web-team-d") })
	next("the end of the first apps", func(ev string) bool { return strings.HasPrefix(ev, "BOOKMARK") })
	status, body := s.Do(t, admin, "GET", "/api/v1/stream/applications?allowWatchBookmarks=yes-please", nil)
	assert.Equal(t, http.StatusBadRequest, status, "a bad allowWatchBookmarks: %s", body)
	assert.Contains(t, body, "allowWatchBookmarks")
	s.MustDo(t, admin, "POST", "/api/v1/applications/web-team-d/sync", map[string]any{}, http.StatusOK, nil)
	next("the sync's change", func(ev string) bool { return strings.HasPrefix(ev, "MODIFIED web-team-d") })

	var got map[string]any
	s.MustDo(t, admin, "GET", "/api/v1/applications/web-team-d", nil, http.StatusOK, &got)
	got["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "web"}
	s.MustDo(t, admin, "PUT", "/api/v1/applications/web-team-d", got, http.StatusOK, nil)
	assert.Equal(t, "web", kubectl(t, "", "get", "application", "web-team-d", "-o", "jsonpath={.metadata.labels.tier}"), "the PUT wrote the object")
	got["spec"].(map[string]any)["project"] = "no-such-project"
	status, body = s.Do(t, admin, "PUT", "/api/v1/applications/web-team-d", got)
	assert.Equal(t, http.StatusBadRequest, status, "a project that does not exist: %s", body)

	e2etest.Eventually(t, 30*time.Second, "the app's events say who synced and updated it", func() (bool, string) {
		var list struct {
			Items []struct{ Reason, Message string }
		}
		s.MustDo(t, admin, "GET", "/api/v1/applications/web-team-d/events", nil, http.StatusOK, &list)
		synced, updated := false, false
		var messages []string
		for _, ev := range list.Items {
			messages = append(messages, ev.Message)
			synced = synced || strings.HasPrefix(ev.Message, "admin initiated sync")
			updated = updated || ev.Message == "admin updated application spec"
		}
		return synced && updated, strings.Join(messages, "; ")
	})
}
