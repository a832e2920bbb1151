package diff

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Result is one object's comparison: both sides normalised, with what the
// rules ignore removed.
type Result struct {
	// Live is the live object's content; nil when it does not exist.
	Live map[string]any
	// Desired is the predicted object's content; nil when the object is no
	// longer desired.
	Desired map[string]any
	secret  bool
}

// Compare normalises live and predicted (either may be nil) and removes
// what rules ignore; owner for managedFieldsManagers is live.
func Compare(live, predicted *unstructured.Unstructured, rules *Rules) Result {
	ident := predicted
	if ident == nil {
		ident = live
	}
	r := Result{Live: Normalize(live), Desired: Normalize(predicted)}
	if ident != nil {
		gvk := ident.GroupVersionKind()
		r.secret = IsSecret(gvk.Group, gvk.Kind)
		rules.Apply(ident, live, r.Live, r.Desired)
	}
	return r
}

// Equal tells whether the sides are the same.
func (r Result) Equal() bool {
	return r.Live != nil && r.Desired != nil && reflect.DeepEqual(r.Live, r.Desired)
}

// Paths names where the sides differ, at most depth levels deep.
func (r Result) Paths(depth int) []string { return Paths(r.Live, r.Desired, depth) }
