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

	"github.com/ferry-gitops/ferry/internal/app"
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

// Views reads an app's status from Ferry (the apps an ApplicationSet
// generates have no object to read it from).
type Views func(ctx context.Context, name string) (*app.Status, error)

// Report compares every app of the control namespace in shadow with the
// Argo CD Application it was imported from, and every app an imported
// ApplicationSet in shadow generates (its status read through views) with
// Argo CD's Application of the same name.
func Report(ctx context.Context, argo, control dynamic.Interface, controlNamespace string, views Views) ([]AppReport, error) {
	list, err := control.Resource(Applications).Namespace(controlNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("report: list the apps of %s: %w", controlNamespace, err)
	}
	var out []AppReport
	for _, obj := range sorted(list.Items) {
		s, ok, err := shadowOf(&obj)
		if err != nil {
			return nil, fmt.Errorf("report: app %s: %w", obj.GetName(), err)
		}
		if ok {
			out = append(out, compare(ctx, argo, obj.GetName(), s.argoApp(obj.GetName()), ferryState(&obj)))
		}
	}
	sets, err := control.Resource(ApplicationSets).Namespace(controlNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("report: list the applicationsets of %s: %w", controlNamespace, err)
	}
	for _, set := range sorted(sets.Items) {
		s, ok, err := shadowOf(&set)
		if err != nil {
			return nil, fmt.Errorf("report: applicationset %s: %w", set.GetName(), err)
		}
		if !ok {
			continue
		}
		ns, name, _ := strings.Cut(s.From, "/")
		theirs, err := setApps(ctx, argo, ns, name)
		if err != nil {
			return nil, fmt.Errorf("report: applicationset %s: %w", set.GetName(), err)
		}
		for _, a := range theirs {
			st, err := views(ctx, a.GetName())
			if err != nil {
				out = append(out, AppReport{Name: a.GetName(), Differences: []string{fmt.Sprintf("Ferry's app %s (of ApplicationSet %s): %v", a.GetName(), set.GetName(), err)}})
				continue
			}
			var raw map[string]any // the status as Ferry writes it to objects
			b, err := json.Marshal(st)
			if err == nil {
				err = json.Unmarshal(b, &raw)
			}
			if err != nil {
				return nil, fmt.Errorf("report: app %s: %w", a.GetName(), err)
			}
			ours := &unstructured.Unstructured{Object: map[string]any{"status": raw}}
			out = append(out, compare(ctx, argo, a.GetName(), a.GetNamespace()+"/"+a.GetName(), ferryState(ours)))
		}
	}
	return out, nil
}

// shadowOf reads obj's shadow annotation; ok is false when it has none.
func shadowOf(obj *unstructured.Unstructured) (s Shadow, ok bool, err error) {
	mark, ok := obj.GetAnnotations()[AnnotationShadow]
	if !ok {
		return s, false, nil
	}
	if err := json.Unmarshal([]byte(mark), &s); err != nil {
		return s, false, fmt.Errorf("annotation %s: %w", AnnotationShadow, err)
	}
	return s, true, nil
}

// compare is the report of the app name, whose state Ferry shows as
// ours, against Argo CD's Application from (namespace/name).
func compare(ctx context.Context, argo dynamic.Interface, name, from string, ours SyncState) AppReport {
	r := AppReport{Name: name, Ferry: ours}
	ns, argoName, _ := strings.Cut(from, "/")
	theirs, err := argo.Resource(Applications).Namespace(ns).Get(ctx, argoName, metav1.GetOptions{})
	if err != nil {
		r.Differences = append(r.Differences, fmt.Sprintf("Argo CD's Application %s: %v", from, err))
		return r
	}
	r.ArgoCD = syncState(theirs)
	r.Differences = differences(r.Ferry, r.ArgoCD)
	return r
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
