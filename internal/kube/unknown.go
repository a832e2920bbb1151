package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Server-side apply refuses fields the schema does not declare whatever
// the request's field validation says (the API server types the applied
// configuration before it looks at it). Validate=false must still get
// through, as `kubectl apply --validate=false` does, so such objects are
// first sent as a dry-run create or update with field validation Ignore:
// the API server decodes them and drops what it does not know, and the
// fields the response lacks are taken out of the object that is then
// applied. One more request, for Validate=false objects only.

// withoutUnknownFields returns obj (t's object) without the fields the API
// server does not know.
func (c *Cluster) withoutUnknownFields(ctx context.Context, t *task, obj, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.writeResource(ctx, t.mapping, t.key.Namespace)
	if err != nil {
		return nil, err
	}
	probe := obj.DeepCopy()
	dry := []string{metav1.DryRunAll}
	var known *unstructured.Unstructured
	if existing == nil {
		known, err = ri.Create(ctx, probe, metav1.CreateOptions{DryRun: dry, FieldValidation: metav1.FieldValidationIgnore, FieldManager: c.opts.FieldManager})
	} else {
		probe.SetResourceVersion(existing.GetResourceVersion())
		known, err = ri.Update(ctx, probe, metav1.UpdateOptions{DryRun: dry, FieldValidation: metav1.FieldValidationIgnore, FieldManager: c.opts.FieldManager})
	}
	if err != nil {
		return nil, err
	}
	out := obj.DeepCopy()
	secretData := out.Object["stringData"]
	keepKnown(out.Object, known.Object)
	if secretData != nil && t.key.Group == "" && t.key.Kind == "Secret" {
		out.Object["stringData"] = secretData // the server turns it into data
	}
	return out, nil
}

// keepKnown deletes from obj what known (the server's decoding of obj)
// does not have: maps by key, lists item by item.
func keepKnown(obj, known map[string]any) {
	for k, v := range obj {
		kv, ok := known[k]
		if !ok {
			delete(obj, k)
			continue
		}
		keepKnownValue(v, kv)
	}
}

func keepKnownValue(v, known any) {
	switch t := v.(type) {
	case map[string]any:
		if km, ok := known.(map[string]any); ok {
			keepKnown(t, km)
		}
	case []any:
		if kl, ok := known.([]any); ok {
			for i := range t {
				if i < len(kl) {
					keepKnownValue(t[i], kl[i])
				}
			}
		}
	}
}

// isSchemaMismatch tells whether err is server-side apply refusing an
// object that does not fit its kind's schema: a field the schema does not
// declare, or a value of the wrong type (a number where a ConfigMap wants a
// string). The API server reports both as an internal error; they are the
// manifest's fault, and sending it again will not help.
func isSchemaMismatch(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	st := status.Status()
	return st.Code == http.StatusInternalServerError && strings.Contains(st.Message, "failed to create typed patch object")
}
