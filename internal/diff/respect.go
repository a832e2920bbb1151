package diff

import (
	"context"
	"strconv"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Respect makes the rules hold in a sync too (the RespectIgnoreDifferences
// sync option): it changes desired, the object about to be applied, so that
// what the rules ignore keeps its live value. Fields named by JSON pointers
// and jq paths take live's value (or go, when live has none); fields owned
// by the named managers leave desired, so a server-side apply leaves them to
// those managers. A nil live (the object is new) changes nothing.
func (r *Rules) Respect(live *unstructured.Unstructured, desired map[string]any) {
	if r.Empty() || live == nil {
		return
	}
	for i := range r.rules {
		ru := &r.rules[i]
		if !ru.matches(live) {
			continue
		}
		for _, p := range ru.pointers {
			path := make([]any, len(p))
			for j, tok := range p {
				path[j] = tok
			}
			keepLive(live.Object, desired, path)
		}
		for _, code := range ru.paths {
			for _, side := range []map[string]any{live.Object, desired} {
				for _, path := range jqPaths(code, side) {
					keepLive(live.Object, desired, path)
				}
			}
		}
		if len(ru.managers) > 0 {
			for _, tree := range ownedFields(live, ru.managers) {
				removeOwned(desired, tree)
			}
		}
	}
}

// jqPaths returns the paths code selects in doc; none when it fails there.
func jqPaths(code *gojq.Code, doc map[string]any) [][]any {
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	var out [][]any
	iter := code.RunWithContext(ctx, toJQ(doc))
	for {
		v, ok := iter.Next()
		if !ok {
			return out
		}
		path, isPath := v.([]any)
		if !isPath {
			return out // an error: the expression does not apply here
		}
		out = append(out, path)
	}
}

// keepLive sets desired at path to live's value there, or deletes it from
// desired when live has none.
func keepLive(live, desired map[string]any, path []any) {
	v, ok := getPath(live, path)
	if !ok {
		tokens := make([]string, len(path))
		for i, p := range path {
			tokens[i] = tokenOf(p)
		}
		removePointer(desired, tokens)
		return
	}
	setPath(desired, path, copyValue(v))
}

func tokenOf(p any) string {
	switch t := p.(type) {
	case string:
		return t
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.Itoa(int(t))
	}
	return ""
}

func getPath(doc any, path []any) (any, bool) {
	cur := doc
	for _, p := range path {
		switch n := cur.(type) {
		case map[string]any:
			v, ok := n[tokenOf(p)]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tokenOf(p))
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			cur = n[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// setPath sets doc at path, making the maps on the way; it gives up at a
// list index that desired does not have.
func setPath(doc map[string]any, path []any, v any) {
	var cur any = doc
	for i, p := range path {
		last := i == len(path)-1
		switch n := cur.(type) {
		case map[string]any:
			key := tokenOf(p)
			if last {
				n[key] = v
				return
			}
			next, ok := n[key]
			if !ok {
				if _, isKey := path[i+1].(string); !isKey {
					return // a list desired does not have
				}
				next = map[string]any{}
				n[key] = next
			}
			cur = next
		case []any:
			idx, err := strconv.Atoi(tokenOf(p))
			if err != nil || idx < 0 || idx >= len(n) {
				return
			}
			if last {
				n[idx] = v
				return
			}
			cur = n[idx]
		default:
			return
		}
	}
}
