package argoimport

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/kube"
)

// The migration report: for every app in shadow, where Ferry's compare
// differs from Argo CD's own, both read from the status each writes to
// its Application object (Ferry's in Argo CD's shape). An object that
// differs for Ferry only in Ferry's own tracking (kube.MessageUntracked:
// the takeover's first sync adds it, and changes nothing else) counts as
// Synced; Argo CD's hooks are not resources of Ferry's status, and are
// left out.

// AppReport is one app's comparison.
type AppReport struct {
	Name string `json:"name"`
	// Ferry and ArgoCD are each one's sync status and revision.
	Ferry, ArgoCD SyncState `json:"-"`
	// Differences name what differs; none: the two agree.
	Differences []string `json:"differences,omitempty"`
}

// SyncState is an app's sync status and revision as one system shows it.
type SyncState struct {
	Status, Revision string
	// Resources maps "group/kind namespace/name" to its sync status.
	Resources map[string]string
	// Messages are the messages of the resources that have one.
	Messages map[string]string
}

// Report compares every app of the control namespace in shadow with the
// Argo CD Application it was imported from.
func Report(ctx context.Context, argo, control dynamic.Interface, controlNamespace string) ([]AppReport, error) {
	list, err := control.Resource(Applications).Namespace(controlNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("report: list the apps of %s: %w", controlNamespace, err)
	}
	var out []AppReport
	for _, obj := range sorted(list.Items) {
		mark, ok := obj.GetAnnotations()[AnnotationShadow]
		if !ok {
			continue
		}
		var s Shadow
		if err := json.Unmarshal([]byte(mark), &s); err != nil {
			return nil, fmt.Errorf("report: app %s: annotation %s: %w", obj.GetName(), AnnotationShadow, err)
		}
		ns, name, _ := strings.Cut(s.From, "/")
		r := AppReport{Name: obj.GetName(), Ferry: ferryState(&obj)}
		theirs, err := argo.Resource(Applications).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			r.Differences = append(r.Differences, fmt.Sprintf("Argo CD's Application %s: %v", s.From, err))
			out = append(out, r)
			continue
		}
		r.ArgoCD = syncState(theirs)
		r.Differences = differences(r.Ferry, r.ArgoCD)
		out = append(out, r)
	}
	return out, nil
}

// ferryState is Ferry's sync state of an app in shadow, with the objects
// that are as Git wants them but for Ferry's tracking counted Synced.
func ferryState(obj *unstructured.Unstructured) SyncState {
	s := syncState(obj)
	resources, _, _ := unstructured.NestedSlice(obj.Object, "status", "resources")
	untracked := map[string]bool{}
	for _, r := range resources {
		if m, ok := r.(map[string]any); ok && m["status"] == "OutOfSync" && m["message"] == kube.MessageUntracked {
			untracked[resourceKey(m)] = true
		}
	}
	outOfSync := 0
	for k, status := range s.Resources {
		if untracked[k] {
			s.Resources[k] = "Synced"
		} else if status == "OutOfSync" {
			outOfSync++
		}
	}
	if s.Status == "OutOfSync" && len(untracked) > 0 && outOfSync == 0 {
		s.Status = "Synced"
	}
	return s
}

func resourceKey(m map[string]any) string {
	str := func(k string) string { v, _ := m[k].(string); return v }
	return fmt.Sprintf("%s/%s %s/%s", str("group"), str("kind"), str("namespace"), str("name"))
}

func syncState(obj *unstructured.Unstructured) SyncState {
	str := func(m map[string]any, path ...string) string {
		v, _, _ := unstructured.NestedString(m, path...)
		return v
	}
	s := SyncState{Status: str(obj.Object, "status", "sync", "status"), Revision: str(obj.Object, "status", "sync", "revision"),
		Resources: map[string]string{}, Messages: map[string]string{}}
	resources, _, _ := unstructured.NestedSlice(obj.Object, "status", "resources")
	for _, r := range resources {
		m, ok := r.(map[string]any)
		if !ok || m["hook"] == true {
			continue
		}
		s.Resources[resourceKey(m)] = str(m, "status")
		if msg := str(m, "message"); msg != "" {
			s.Messages[resourceKey(m)] = msg
		}
	}
	return s
}

// differences says where Ferry's view differs from Argo CD's.
func differences(ferry, argo SyncState) []string {
	var out []string
	if ferry.Status != argo.Status {
		out = append(out, fmt.Sprintf("sync: Ferry %s, Argo CD %s", orNone(ferry.Status), orNone(argo.Status)))
	}
	if ferry.Revision != argo.Revision {
		out = append(out, fmt.Sprintf("revision: Ferry %s, Argo CD %s (they compare different commits: refresh both)", orNone(ferry.Revision), orNone(argo.Revision)))
	}
	keys := map[string]bool{}
	for k := range ferry.Resources {
		keys[k] = true
	}
	for k := range argo.Resources {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		f, okF := ferry.Resources[k]
		a, okA := argo.Resources[k]
		switch {
		case !okF:
			out = append(out, fmt.Sprintf("%s: Argo CD %s, not one of Ferry's resources", k, a))
		case !okA:
			out = append(out, fmt.Sprintf("%s: Ferry %s, not one of Argo CD's resources", k, f))
		case f != a:
			d := fmt.Sprintf("%s: Ferry %s, Argo CD %s", k, f, a)
			if msg := ferry.Messages[k]; msg != "" {
				d += " (Ferry: " + msg + ")"
			}
			out = append(out, d)
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
