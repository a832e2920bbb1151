package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestLiveFollowsTheWatchedConfigAndSecret: a Live config evaluates and
// sends with the config set last, none while there is none (a send is then
// retried, not refused); $key references read the watched Secret after the
// environment, and a missing one names the Secret, never a value.
func TestLiveFollowsTheWatchedConfigAndSecret(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Token"))
	}))
	defer srv.Close()
	live := &Live{Where: "ConfigMap argocd-notifications-cm in namespace argocd"}
	watched := &WatchedSecret{Name: "Secret argocd-notifications-secret in namespace argocd"}
	env := map[string]string{}
	secrets := &Secrets{Watched: watched, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	subs := Subscriptions(map[string]string{SubscribeAnnotation + "on-sync-failed.hook": ""})
	obj := testApp(app.OperationFailed, app.HealthHealthy)
	d := Delivery{ID: "app/web/notify/1", Trigger: "on-sync-failed", Templates: []string{"app-sync-failed"}, Service: "hook"}

	results, problems := live.Evaluate(obj, subs, time.Now())
	require.Empty(t, results)
	require.Equal(t, []string{"no notifications config: ConfigMap argocd-notifications-cm in namespace argocd is missing"}, problems)
	require.False(t, live.HasSubscriptions())
	err := live.Send(context.Background(), d, obj, secrets)
	require.ErrorContains(t, err, "is missing")
	require.False(t, IsPermanent(err), "retried until the ConfigMap exists")

	live.Set(configWith(t, map[string]string{"service.webhook.hook": "url: " + srv.URL + "\nheaders: [{name: X-Token, value: $hook-token}]"}))
	results, problems = live.Evaluate(obj, subs, time.Now())
	require.Empty(t, problems)
	require.Len(t, results, 1)
	err = live.Current().CheckSecrets(secrets)
	require.ErrorContains(t, err, "$hook-token not found: set FERRY_NOTIFY_HOOK_TOKEN in the worker's environment or add the keys to Secret argocd-notifications-secret in namespace argocd")

	watched.Set(map[string]string{"hook-token": "from-the-secret"})
	require.NoError(t, live.Send(context.Background(), d, obj, secrets))
	watched.Set(map[string]string{"hook-token": "rotated"})
	require.NoError(t, live.Send(context.Background(), d, obj, secrets))
	env["FERRY_NOTIFY_HOOK_TOKEN"] = "from-the-environment"
	require.NoError(t, live.Send(context.Background(), d, obj, secrets))
	require.Equal(t, []string{"from-the-secret", "rotated", "from-the-environment"}, got)

	delete(env, "FERRY_NOTIFY_HOOK_TOKEN")
	watched.Set(nil)
	err = live.Send(context.Background(), d, obj, secrets)
	require.True(t, IsPermanent(err), err)
	require.NotContains(t, err.Error(), "rotated")
}
