package notify

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func labelledApp(t *testing.T, labels, annotations map[string]string) json.RawMessage {
	t.Helper()
	a := app.Application{}
	a.Metadata.Name = "web"
	a.Metadata.Labels, a.Metadata.Annotations = labels, annotations
	st := app.Status{OperationState: &app.OperationState{ID: "1", Revision: "abc123", Phase: app.OperationFailed}}
	obj, err := AppObject(a, st)
	require.NoError(t, err)
	return obj
}

// TestSubscriptionsKeyAsArgoCD: the ConfigMap's subscriptions subscribe the
// apps their selector matches, to their triggers or else defaultTriggers,
// each recipient "<service>[:<recipient>]"; one the annotations name too
// is evaluated once.
func TestSubscriptionsKeyAsArgoCD(t *testing.T) {
	c := configWith(t, map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1",
		"service.webhook.ops":  "url: http://127.0.0.1:2",
		"defaultTriggers":      "[on-sync-failed, on-deployed]",
		"subscriptions": `
- recipients: [hook]
  triggers: [on-sync-failed]
- recipients: ["ops:pager"]
  selector: team=web,env!=dev
`,
	})
	require.True(t, c.HasSubscriptions())
	dests := func(res []Result) []string {
		var out []string
		for _, r := range res {
			out = append(out, r.Trigger+"→"+r.Service+":"+r.Recipient)
		}
		return out
	}
	res, problems := c.Evaluate(labelledApp(t, map[string]string{"team": "web"}, nil), nil, time.Now())
	require.Empty(t, problems)
	require.Equal(t, []string{"on-sync-failed→hook:", "on-sync-failed→ops:pager", "on-deployed→ops:pager"}, dests(res))
	require.True(t, res[0].Triggered, "the failed sync triggers on-sync-failed")

	res, _ = c.Evaluate(labelledApp(t, map[string]string{"team": "web", "env": "dev"}, nil), nil, time.Now())
	require.Equal(t, []string{"on-sync-failed→hook:"}, dests(res), "the selector leaves env=dev out")

	annotated := labelledApp(t, nil, map[string]string{SubscribeAnnotation + "on-sync-failed.hook": ""})
	res, _ = c.Evaluate(annotated, Subscriptions(map[string]string{SubscribeAnnotation + "on-sync-failed.hook": ""}), time.Now())
	require.Equal(t, []string{"on-sync-failed→hook:"}, dests(res), "annotation and subscription name the same destination once")

	none := configWith(t, map[string]string{"service.webhook.hook": "url: http://127.0.0.1:1"})
	require.False(t, none.HasSubscriptions())
	res, _ = none.Evaluate(labelledApp(t, map[string]string{"team": "web"}, nil), nil, time.Now())
	require.Empty(t, res)

	_, err := FromData(map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1",
		"subscriptions":        "- recipients: [hook]\n  selector: 'a in (('\n- recipients: []\n  triggers: [on-nothing]\n- recipients: [mail:me]\n",
	})
	require.Error(t, err)
	for _, want := range []string{
		`subscription 0: selector "a in (("`,
		`subscription 1 has no recipients`,
		`subscription 1: trigger "on-nothing" is neither`,
		`subscription 2: recipient "mail:me": no service.mail`,
	} {
		require.ErrorContains(t, err, want)
	}
}
