package diff

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverMetadata are the metadata fields the API server writes on every
// change: comparing them would make every object look changed.
var serverMetadata = []string{
	"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink",
}

// serverAnnotations are annotations that controllers and clients write on
// the live object and no manifest sets.
var serverAnnotations = []string{
	"deployment.kubernetes.io/revision",
	"kubectl.kubernetes.io/last-applied-configuration",
}

// Normalize returns a copy of obj's content without what the server
// manages: status, the fields in serverMetadata and serverAnnotations. A
// nil obj gives nil.
func Normalize(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	out := obj.DeepCopy().Object
	delete(out, "status")
	meta, ok := out["metadata"].(map[string]any)
	if !ok {
		return out
	}
	for _, f := range serverMetadata {
		delete(meta, f)
	}
	if ann, ok := meta["annotations"].(map[string]any); ok {
		for _, a := range serverAnnotations {
			delete(ann, a)
		}
		if len(ann) == 0 {
			delete(meta, "annotations")
		}
	}
	return out
}
