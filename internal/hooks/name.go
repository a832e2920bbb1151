package hooks

import (
	"hash/fnv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// AnnotationOperation marks a hook object with the run that created it:
// "<operation ID>/<phase>". A run that finds its own value on an object
// waits for that object instead of creating another.
const AnnotationOperation = "ferry.dev/hook-operation"

const (
	// maxNameLength keeps generated names valid as label values (a Job's
	// name becomes its pods' job-name label) and DNS labels.
	maxNameLength = 63
	suffixLength  = 5
)

// suffixAlphabet is Kubernetes' own for generated names: no vowels, no
// look-alikes.
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// Name is the name of the hook object obj in a run: its own name, or for a
// generateName hook the prefix (shortened to fit) and a suffix derived from
// the operation ID and phase. The same run always gives the same name, so a
// repeated run finds what it created; another operation gives another.
func Name(obj *unstructured.Unstructured, operationID string, phase app.HookType) string {
	if n := obj.GetName(); n != "" {
		return n
	}
	prefix := obj.GetGenerateName()
	if len(prefix) > maxNameLength-suffixLength {
		prefix = prefix[:maxNameLength-suffixLength]
	}
	h := fnv.New64a()
	for _, part := range []string{operationID, string(phase), obj.GetAPIVersion(), obj.GetKind(), obj.GetGenerateName()} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	sum := h.Sum64()
	suffix := make([]byte, suffixLength)
	for i := range suffix {
		suffix[i] = suffixAlphabet[sum%uint64(len(suffixAlphabet))]
		sum /= uint64(len(suffixAlphabet))
	}
	return prefix + string(suffix)
}

// runMark is the AnnotationOperation value of a run.
func runMark(operationID string, phase app.HookType) string { return operationID + "/" + string(phase) }

// instance is the object a run creates for hook h: a copy named by Name,
// placed in namespace (empty for a cluster-scoped kind), marked as the
// app's (kube's label and tracking id, so a cascading delete removes it and
// nothing else claims it) and as this run's.
func instance(h Hook, appName, namespace, operationID string, phase app.HookType) *unstructured.Unstructured {
	obj := h.Object.DeepCopy()
	obj.SetName(Name(h.Object, operationID, phase))
	obj.SetGenerateName("")
	obj.SetNamespace(namespace)
	obj.SetResourceVersion("")
	obj.SetUID("")
	kube.Track(appName, obj)
	ann := obj.GetAnnotations()
	ann[AnnotationOperation] = runMark(operationID, phase)
	obj.SetAnnotations(ann)
	return obj
}
