package render

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkOutput bounds what one source rendered: how many objects, and how
// many bytes they take as JSON. It runs on every render, whatever the
// source type, in the worker's process and in a sandbox alike, so that a
// set too large for the workflow's payloads or the manifest cache is a
// clear error rather than a failure further on.
func checkOutput(l Limits, appPath string, objs []*unstructured.Unstructured) error {
	if len(objs) > l.MaxObjects {
		return &LimitError{Path: appPath, What: "objects", Limit: int64(l.MaxObjects), Flag: l.Flags.Objects}
	}
	var total int64
	for _, o := range objs {
		if total += jsonSize(o.Object, l.MaxRenderedBytes-total); total > l.MaxRenderedBytes {
			return &LimitError{Path: appPath, What: "rendered size", Limit: l.MaxRenderedBytes, Flag: l.Flags.RenderedBytes}
		}
	}
	return nil
}

// jsonSize is the length of v's JSON encoding, as encoding/json writes it
// (strings escaped the same way, to within the HTML escapes), without
// encoding it. It stops counting once past budget.
func jsonSize(v any, budget int64) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		if v {
			return 4
		}
		return 5
	case string:
		return stringSize(v)
	case int64:
		return int64(len(strconv.FormatInt(v, 10)))
	case int:
		return int64(len(strconv.Itoa(v)))
	case int32:
		return int64(len(strconv.FormatInt(int64(v), 10)))
	case float64:
		return int64(len(strconv.FormatFloat(v, 'g', -1, 64)))
	case map[string]any:
		if len(v) == 0 {
			return 2
		}
		n := int64(1) // { and }, and a comma between entries
		for k, e := range v {
			n += stringSize(k) + 2 // : and , or }
			if n += jsonSize(e, budget-n); n > budget {
				return n
			}
		}
		return n
	case []any:
		if len(v) == 0 {
			return 2
		}
		n := int64(1) // [ and ], and a comma between items
		for _, e := range v {
			if n += jsonSize(e, budget-n) + 1; n > budget {
				return n
			}
		}
		return n
	}
	// Unstructured content holds only the types above; anything else is
	// counted by its text.
	return int64(len(strconv.Quote(fmt.Sprint(v))))
}

// stringSize is the length of s as a JSON string: quotes, and escapes for
// quotes, backslashes and control characters.
func stringSize(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		case c < utf8.RuneSelf:
			n++
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			n += int64(size)
			i += size
			continue
		}
		i++
	}
	return n
}
