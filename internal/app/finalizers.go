package app

import (
	"fmt"
	"strings"
)

// Argo CD's finalizers asking that deleting the Application delete its
// resources first (cascading deletion), and with which propagation policy.
const (
	// ResourcesFinalizer cascades in the foreground: each resource is gone
	// only once what it owns (a Deployment's ReplicaSets and Pods) is.
	ResourcesFinalizer = "resources-finalizer.argocd.argoproj.io"
	// ForegroundFinalizer is ResourcesFinalizer, said explicitly.
	ForegroundFinalizer = ResourcesFinalizer + "/foreground"
	// BackgroundFinalizer cascades in the background: the garbage
	// collector deletes what the resources own after them.
	BackgroundFinalizer = ResourcesFinalizer + "/background"
)

// postDeleteFinalizer is the one Argo CD's controller adds itself when an
// app has PostDelete hooks; files exported from a cluster carry it.
const postDeleteFinalizer = "post-delete-finalizer.argocd.argoproj.io"

// CascadeDelete reports whether deleting the app deletes its resources, as
// Argo CD's resources finalizer asks: what decides when an app of apps or
// an ApplicationSet deletes the app (`ferry app delete` cascades unless
// --cascade=false).
func (a *Application) CascadeDelete() bool {
	return a.DeletePropagation() != ""
}

// DeletePropagation is the propagation policy of the app's cascading
// deletion (PropagationForeground or PropagationBackground) as its
// finalizer names it, or "" when it has none.
func (a *Application) DeletePropagation() string {
	for _, f := range a.Metadata.Finalizers {
		switch f {
		case ResourcesFinalizer, ForegroundFinalizer:
			return PropagationForeground
		case BackgroundFinalizer:
			return PropagationBackground
		}
	}
	return ""
}

// finalizers refuses every finalizer but Argo CD's resources finalizers,
// which are what Ferry acts on when the app is deleted.
func (v *validator) finalizers(fs []string) {
	var policy string
	for i, f := range fs {
		p := fmt.Sprintf("metadata.finalizers[%d]", i)
		known := map[string]string{ResourcesFinalizer: PropagationForeground, ForegroundFinalizer: PropagationForeground,
			BackgroundFinalizer: PropagationBackground}
		switch got, ok := known[f]; {
		case ok && policy != "" && got != policy:
			v.add(p, "%q asks for %s deletion and an earlier finalizer for %s: keep one of them", f, got, policy)
		case ok:
			policy = got
		case strings.HasPrefix(f, postDeleteFinalizer):
			v.add(p, "%q is added by Argo CD's controller itself; Ferry runs PostDelete hooks when it deletes the app's resources: remove it, and add %s for a cascading delete", f, ResourcesFinalizer)
		default:
			v.add(p, "%q is not a finalizer Ferry acts on: write %s (deleting the app deletes its resources, foreground) or %s, or remove it",
				f, ResourcesFinalizer, BackgroundFinalizer)
		}
	}
}
