package diff

import (
	"context"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
)

// jqTimeout bounds one jq path expression on one object: a pathological
// expression must not stall a compare.
const jqTimeout = time.Second

// compileJQ compiles a jq path expression into a program that deletes the
// paths it selects, as Argo CD's jqPathExpressions do.
func compileJQ(expr string) (*gojq.Code, error) {
	if _, err := gojq.Parse(expr); err != nil {
		return nil, fmt.Errorf("%q is not a jq expression: %w", expr, err)
	}
	q, err := gojq.Parse("del(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("%q is not a jq path expression: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", expr, err)
	}
	return code, nil
}

// removeJQ runs code on doc and replaces doc's content with the result. An
// expression that fails on this object (it selects through a field the
// object does not have, say) ignores nothing on it.
func removeJQ(doc map[string]any, code *gojq.Code) {
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	iter := code.RunWithContext(ctx, toJQ(doc))
	v, ok := iter.Next()
	if !ok {
		return
	}
	if _, failed := v.(error); failed {
		return
	}
	out, ok := fromJQ(v).(map[string]any)
	if !ok {
		return
	}
	for k := range doc {
		delete(doc, k)
	}
	for k, val := range out {
		doc[k] = val
	}
}

// toJQ converts unstructured content (int64 numbers) to what gojq takes
// (int numbers).
func toJQ(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = toJQ(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = toJQ(e)
		}
		return l
	case int64:
		return int(t)
	case int32:
		return int(t)
	}
	return v
}

// fromJQ converts back: int numbers become int64 again.
func fromJQ(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = fromJQ(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = fromJQ(e)
		}
		return t
	case int:
		return int64(t)
	}
	return v
}
