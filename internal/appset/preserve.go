package appset

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ferry-gitops/ferry/internal/app"
)

// alwaysPreservedAnnotations are the annotations Argo CD's controller
// keeps on every generated app, whatever spec.preservedFields says: the
// notifications' record, the refresh and hydrate requests.
var alwaysPreservedAnnotations = []string{
	"notified.notifications.argoproj.io",
	"argocd.argoproj.io/refresh",
	"argocd.argoproj.io/hydrate",
}

// KeepPreserved is the generated app gen as a set writes it over live: the
// annotations and labels spec.preservedFields (pf, nil: none) names, and
// the annotations Argo CD always keeps, take live's values where live has
// them, so that what a user or a tool set there stays, as Argo CD's
// controller keeps them. gen is not changed.
func KeepPreserved(pf *PreservedFields, live, gen *app.Application) *app.Application {
	annotations := alwaysPreservedAnnotations
	var labels []string
	if pf != nil {
		annotations = append(append([]string{}, pf.Annotations...), annotations...)
		labels = pf.Labels
	}
	out := *gen
	out.Metadata.Annotations = keepKeys(gen.Metadata.Annotations, live.Metadata.Annotations, annotations)
	out.Metadata.Labels = keepKeys(gen.Metadata.Labels, live.Metadata.Labels, labels)
	return &out
}

// keepKeys is gen with live's value of each of keys that live has; gen
// itself is not changed.
func keepKeys(gen, live map[string]string, keys []string) map[string]string {
	out, cloned := gen, false
	for _, k := range keys {
		v, ok := live[k]
		if !ok {
			continue
		}
		if !cloned {
			out, cloned = maps.Clone(gen), true
			if out == nil {
				out = map[string]string{}
			}
		}
		out[k] = v
	}
	return out
}

// validatePreserved checks spec.preservedFields: each entry a label or
// annotation key.
func validatePreserved(pf *PreservedFields) []app.FieldError {
	if pf == nil {
		return nil
	}
	var errs []app.FieldError
	check := func(field, what string, keys []string) {
		for i, k := range keys {
			if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
				errs = append(errs, app.FieldError{Field: fmt.Sprintf("spec.preservedFields.%s[%d]", field, i),
					Message: fmt.Sprintf("%q is not %s key: write a key such as example.com/owner (%s)", k, what, msgs[0])})
			}
		}
	}
	check("annotations", "an annotation", pf.Annotations)
	check("labels", "a label", pf.Labels)
	return errs
}
