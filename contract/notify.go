package contract

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ferry-gitops/ferry/internal/notify"
)

// Notifications: an app's triggers are evaluated in its workflow when its
// status changes; each notification that fires is a workflow of its own,
// a child that outlives the app's run (parent-close policy ABANDON) and
// sends through one activity with its own retry policy.
const (
	// NotificationWorkflow sends one notification (NotificationInput).
	NotificationWorkflow = "Notification"
	// ActivitySendNotification renders and sends it, on TaskQueue.
	ActivitySendNotification = "SendNotification"
	// ErrNotificationRefused: the notification cannot be sent as
	// configured (a template fails, a receiver refuses it with a 4xx).
	ErrNotificationRefused = "NotificationRefused"
)

// NotificationInput is one notification: what the templates render from
// (the app's object as conditions saw it, notify.AppObject) and where it
// goes. It holds no secret: services are resolved by the activity.
type NotificationInput struct {
	App      string          `json:"app"`
	Delivery notify.Delivery `json:"delivery"`
	Object   json.RawMessage `json:"object"`
}

// NotificationWorkflowID is the ID of one notification of an app:
// app/<name>/notify/<chain>-<hash of its key and event>. Starting it twice
// is refused, so a notification is sent once.
func NotificationWorkflowID(name, chain, key string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return fmt.Sprintf("%s/notify/%s-%016x", WorkflowID(name), chain, h.Sum64())
}

// Notifier is the worker's notifications config, as the workflow uses it.
type Notifier interface {
	Evaluate(appObject json.RawMessage, subs []notify.Subscription, now time.Time) ([]notify.Result, []string)
	// HasSubscriptions: the config subscribes apps by itself (its
	// subscriptions key), so an app without annotations may be notified.
	HasSubscriptions() bool
}
