package appobjects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Objects reads and writes the Application objects of the control cluster.
type Objects struct {
	Client dynamic.Interface
	// Validate are the options the apps are validated with.
	Validate app.ValidateOptions
	now      func() time.Time
}

// WriteStatus writes st, an app's status, to its object key through the
// status subresource. st nil keeps the status the object has. Either way
// the object's own problems, or else problem, are its InvalidSpecError
// condition (an object changed into an invalid one leaves its app running
// the spec before).
// Nothing is written when the status is as it was; an object that is gone
// is no error.
func (o *Objects) WriteStatus(ctx context.Context, key string, st *app.Status, problem error) error {
	ns, name, err := splitKey(key)
	if err != nil {
		return err
	}
	apps := o.Client.Resource(Applications).Namespace(ns)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := apps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		next, err := o.statusOf(u, st, problem)
		if err != nil || sameJSON(u.Object["status"], next) {
			return err
		}
		u.Object["status"] = next
		_, err = apps.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write the status of application %s: %w", key, err)
	}
	return nil
}

// FieldManager is the field manager of Ferry's writes to objects.
const FieldManager = "ferry"

// statusOf is the status to write to u: st (or u's own), with u's
// InvalidSpecError condition as Read finds it now, or problem's, and the
// generation it found it in.
func (o *Objects) statusOf(u *unstructured.Unstructured, st *app.Status, problem error) (map[string]any, error) {
	var cur app.Status
	if st != nil {
		cur = *st
	} else if raw, ok := u.Object["status"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &cur) // a status of the wrong shape is rewritten
	}
	var old *app.Condition
	if i := slices.IndexFunc(cur.Conditions, func(c app.Condition) bool { return c.Type == ConditionInvalidSpec }); i >= 0 {
		old = &cur.Conditions[i]
	}
	cur.Conditions = slices.DeleteFunc(slices.Clone(cur.Conditions), func(c app.Condition) bool { return c.Type == ConditionInvalidSpec })
	if _, err := Read(u, o.Validate); err != nil {
		problem = err
	}
	if problem != nil {
		c := app.Condition{Type: ConditionInvalidSpec, Message: invalidMessage(problem), At: o.clock()}
		if old != nil && old.Message == c.Message {
			c.At = old.At
		}
		cur.Conditions = append(cur.Conditions, c)
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	// The generation the condition was checked against: a reader that
	// just changed the spec knows a condition of the spec before.
	out[ObservedGeneration] = u.GetGeneration()
	return out, nil
}

// ObservedGeneration is the status field that names the object's
// generation whose spec the InvalidSpecError condition is about.
const ObservedGeneration = "observedGeneration"

// invalidMessage is the condition's message for Read's error: every
// problem, with the object's name said once by the condition's object.
func invalidMessage(err error) string {
	var ve *app.ValidationError
	if errors.As(err, &ve) {
		msgs := make([]string, len(ve.Errors))
		for i, fe := range ve.Errors {
			msgs[i] = fe.Error()
		}
		return "Application spec is invalid: " + joinProblems(msgs)
	}
	return "Application spec is invalid: " + err.Error()
}

// sameJSON: a and b encode alike (an object's numbers decode as int64,
// a status's as float64).
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

func (o *Objects) clock() time.Time {
	if o.now != nil {
		return o.now().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}
