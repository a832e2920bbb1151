package regionlive

import (
	"context"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Events returns the core/v1 Events about one object, oldest first: those
// whose involvedObject has its name (and its uid, when uid is not empty).
// A cluster-scoped object (namespace "") has its events in "default".
func (r *Region) Events(ctx context.Context, namespace, name, uid string) ([]corev1.Event, error) {
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	sel := fields.Set{"involvedObject.name": name}
	if uid != "" {
		sel["involvedObject.uid"] = uid
	}
	list, err := r.Client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	// The field selector is the server's filter; this one holds with
	// clients that ignore it.
	events := slices.DeleteFunc(list.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.Name != name || (uid != "" && string(e.InvolvedObject.UID) != uid)
	})
	sort.SliceStable(events, func(i, j int) bool { return eventTime(&events[i]).Before(eventTime(&events[j])) })
	return events, nil
}

// eventTime is when an event last happened: lastTimestamp, else eventTime
// (events.k8s.io's), else when it was made.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
