package diff

import (
	"encoding/json"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ownedFields returns, for each managedFields entry of obj whose manager is
// in managers, the fields it owns as a FieldsV1 tree ({"f:spec":
// {"f:replicas": {}}}).
func ownedFields(obj *unstructured.Unstructured, managers map[string]bool) []map[string]any {
	var out []map[string]any
	for _, e := range obj.GetManagedFields() {
		if !managers[e.Manager] || e.FieldsV1 == nil {
			continue
		}
		var tree map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &tree); err == nil {
			out = append(out, tree)
		}
	}
	return out
}

// removeOwned deletes from doc the leaves of a FieldsV1 tree: the fields,
// list items ("k:" by key, "v:" by value, "i:" by index) and values a
// manager owns. A "." entry owns only the existence of a map or list, not
// what is in it: it removes nothing, so fields of other managers inside
// stay compared. Maps and lists that end up empty go too.
func removeOwned(doc map[string]any, tree map[string]any) {
	removeOwnedMap(doc, tree)
}

func removeOwnedMap(node map[string]any, tree map[string]any) (emptied bool) {
	removed := false
	for k, sub := range tree {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue
		}
		child, present := node[name]
		if !present {
			continue
		}
		subTree, _ := sub.(map[string]any)
		if isLeaf(subTree) {
			delete(node, name)
			removed = true
			continue
		}
		switch c := child.(type) {
		case map[string]any:
			if removeOwnedMap(c, subTree) {
				delete(node, name)
				removed = true
			}
		case []any:
			left := removeOwnedList(c, subTree)
			if len(left) == 0 && len(c) > 0 {
				delete(node, name)
				removed = true
			} else {
				node[name] = left
			}
		}
	}
	return removed && len(node) == 0
}

// removeOwnedList returns list without the items tree owns entirely, with
// the owned fields of the others removed.
func removeOwnedList(list []any, tree map[string]any) []any {
	drop := make([]bool, len(list))
	for k, sub := range tree {
		subTree, _ := sub.(map[string]any)
		for i, item := range list {
			if drop[i] || !selects(k, i, item) {
				continue
			}
			if isLeaf(subTree) {
				drop[i] = true
			} else if m, ok := item.(map[string]any); ok && removeOwnedMap(m, subTree) {
				drop[i] = true
			}
		}
	}
	out := make([]any, 0, len(list))
	for i, item := range list {
		if !drop[i] {
			out = append(out, item)
		}
	}
	return out
}

// selects tells whether the path element k ("k:{...}", "v:...", "i:N")
// names item, the list's i-th.
func selects(k string, i int, item any) bool {
	switch {
	case strings.HasPrefix(k, "k:"):
		var key map[string]any
		if json.Unmarshal([]byte(k[2:]), &key) != nil {
			return false
		}
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for field, want := range key {
			if !sameJSON(m[field], want) {
				return false
			}
		}
		return true
	case strings.HasPrefix(k, "v:"):
		var want any
		return json.Unmarshal([]byte(k[2:]), &want) == nil && sameJSON(item, want)
	case strings.HasPrefix(k, "i:"):
		n, err := strconv.Atoi(k[2:])
		return err == nil && n == i
	}
	return false
}

// isLeaf tells whether a FieldsV1 subtree owns its node outright: it is
// empty. A subtree of "." alone owns the node's existence, not its content.
func isLeaf(tree map[string]any) bool { return len(tree) == 0 }

// sameJSON compares values as JSON: an int64 from an object equals the
// float64 that encoding/json makes of the same number.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
