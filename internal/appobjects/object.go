package appobjects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Applications is the resource of Argo CD's Application objects.
var Applications = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// RefreshAnnotation asks for a refresh ("normal" or "hard"), as Argo CD's;
// it is removed once the app was asked.
const RefreshAnnotation = "argocd.argoproj.io/refresh"

// ConditionInvalidSpec is Argo CD's condition of an Application whose spec
// cannot be used.
const ConditionInvalidSpec = "InvalidSpecError"

// Key is an object's "namespace/name", as client-go's cache keys it.
func Key(namespace, name string) string { return namespace + "/" + name }

// Read is the Application an object asks for, validated as ferry app apply
// validates a file: every problem at once, in a *app.ValidationError. What
// the API server and the controller write (status, operation, the server's
// metadata) and the refresh annotation are not the app's.
func Read(u *unstructured.Unstructured, opts app.ValidateOptions) (*app.Application, error) {
	data, err := json.Marshal(specOf(u))
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", Key(u.GetNamespace(), u.GetName()), err)
	}
	return app.Read(data, opts)
}

// specOf is the part of the object that is the app's: what Read reads,
// and what specDigest stands for.
func specOf(u *unstructured.Unstructured) map[string]any {
	obj := runtime.DeepCopyJSON(u.Object)
	delete(obj, "status")
	delete(obj, "operation")
	md := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}
	if l := u.GetLabels(); len(l) > 0 {
		md["labels"] = l
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		delete(a, RefreshAnnotation)
		if len(a) > 0 {
			md["annotations"] = a
		}
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		md["finalizers"] = f
	}
	obj["metadata"] = md
	return obj
}

// specDigest changes when what the app is sent changes: a status write, an
// operation or a refresh annotation leave it as it was.
func specDigest(u *unstructured.Unstructured) string {
	b, _ := json.Marshal(specOf(u)) // JSON values decoded from JSON: always encode
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
