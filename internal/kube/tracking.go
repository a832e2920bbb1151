package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ferry-gitops/ferry/internal/app"
)

const (
	// LabelApp carries the name of the Application that applied an object.
	// It narrows list requests; it does not make an object the app's.
	LabelApp = "ferry.dev/app"
	// AnnotationTrackingID carries TrackingID: the proof of ownership.
	AnnotationTrackingID = "ferry.dev/tracking-id"
)

// TrackingID is the annotation value that makes the object named by key the
// Application appName's: "<app>:<group>/<kind>:<namespace>/<name>", with the
// group empty for the core group and the namespace empty for cluster-scoped
// objects ("guestbook:/Namespace:/shop"). The version is left out, so a move
// to a new API version keeps ownership.
func TrackingID(appName string, key app.ResourceKey) string {
	return fmt.Sprintf("%s:%s/%s:%s/%s", appName, key.Group, key.Kind, key.Namespace, key.Name)
}

// KeyOf names obj.
func KeyOf(obj *unstructured.Unstructured) app.ResourceKey {
	gvk := obj.GroupVersionKind()
	return app.ResourceKey{
		Group:     gvk.Group,
		Version:   gvk.Version,
		Kind:      gvk.Kind,
		Namespace: obj.GetNamespace(),
		Name:      obj.GetName(),
	}
}

// IsTracked tells whether obj belongs to the Application appName: its
// tracking id must be the one its own identity gives. A copied label, or a
// tracking id copied onto an object with another name, does not count.
func IsTracked(appName string, obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[AnnotationTrackingID] == TrackingID(appName, KeyOf(obj))
}

// AnnotationArgoCDTrackingID is Argo CD's tracking annotation (its
// annotation tracking method, the default since Argo CD 3): the same
// "<app>:<group>/<kind>:<namespace>/<name>" as Ferry's.
const AnnotationArgoCDTrackingID = "argocd.argoproj.io/tracking-id"

// IsTrackedByArgoCD tells whether Argo CD's application appName applied
// obj: the app Ferry took over under the same name (ferry app takeover).
func IsTrackedByArgoCD(appName string, obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[AnnotationArgoCDTrackingID] == TrackingID(appName, KeyOf(obj))
}

// MessageUntracked is the compare's message of an object that differs
// from what Git wants only in Ferry's tracking: one that another tool
// (Argo CD) applied, which a sync adopts without changing anything else.
const MessageUntracked = "not tracked by Ferry yet, otherwise as Git wants it: a sync adopts it"

// untracked is obj without Ferry's tracking label and annotation.
func untracked(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for field, key := range map[string]string{"labels": LabelApp, "annotations": AnnotationTrackingID} {
		m, _, _ := unstructured.NestedMap(out.Object, "metadata", field)
		delete(m, key)
		if len(m) == 0 {
			unstructured.RemoveNestedField(out.Object, "metadata", field)
		} else {
			_ = unstructured.SetNestedMap(out.Object, m, "metadata", field)
		}
	}
	return out
}

// trackedBy returns the Application named by obj's tracking id, if any.
func trackedBy(obj *unstructured.Unstructured) string {
	id := obj.GetAnnotations()[AnnotationTrackingID]
	owner, _, ok := strings.Cut(id, ":")
	if !ok {
		return ""
	}
	return owner
}

// AppLabel is the LabelApp value of appName's objects: the name itself
// (app.InstanceName for an app of another namespace) when it fits a label
// value (63 characters), else its first 50 characters
// and a hash of the whole, as app names may be DNS subdomains of up to 253
// characters. The label only narrows lists; the tracking id, which holds
// the whole name, decides ownership.
func AppLabel(appName string) string {
	label := app.InstanceName(appName) // team-a/web: team-a_web, as Argo CD writes it
	if len(label) <= validation.LabelValueMaxLength {
		return label
	}
	sum := sha256.Sum256([]byte(appName))
	return strings.TrimRight(label[:50], ".-_") + "-" + hex.EncodeToString(sum[:6])
}

// Track marks obj, already placed in its namespace, as appName's: the
// label and the tracking id.
func Track(appName string, obj *unstructured.Unstructured) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelApp] = AppLabel(appName)
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationTrackingID] = TrackingID(appName, KeyOf(obj))
	obj.SetAnnotations(annotations)
}

// validAppName refuses names that are not DNS subdomains (as Argo CD's
// application names are), or a namespace (a DNS label) and such a name
// ("team-a/web"), which also keeps a tracking id unambiguous.
func validAppName(appName string) error {
	if appName == "" {
		return invalidf("application name is empty")
	}
	ns, name := app.SplitName(appName)
	errs := validation.IsDNS1123Subdomain(name)
	if strings.Contains(appName, "/") {
		errs = append(errs, validation.IsDNS1123Label(ns)...)
	}
	if len(errs) > 0 {
		return invalidf("application name %q is not a DNS subdomain, or a namespace/name: %s", appName, strings.Join(errs, "; "))
	}
	return nil
}

// identity is key without its version: two keys naming the same object
// through different API versions are equal.
func identity(key app.ResourceKey) app.ResourceKey {
	key.Version = ""
	return key
}

// KeyString names key as Ferry's messages and diff headers do, for the
// CLI's diff through ferry-server.
func KeyString(key app.ResourceKey) string { return keyString(key) }

// keyString is how errors and messages name an object:
// "Deployment/shop/web", or "Namespace/shop" when cluster-scoped.
func keyString(key app.ResourceKey) string {
	if key.Name == "" {
		return key.Kind // a whole kind, as in a failed list
	}
	if key.Namespace == "" {
		return key.Kind + "/" + key.Name
	}
	return key.Kind + "/" + key.Namespace + "/" + key.Name
}
