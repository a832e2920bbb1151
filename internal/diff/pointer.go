package diff

import (
	"fmt"
	"strconv"
	"strings"
)

// parsePointer splits an RFC 6901 JSON pointer into its reference tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, fmt.Errorf("an empty JSON pointer would ignore the whole object: name a field, e.g. /spec/replicas")
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must start with '/', e.g. /spec/replicas", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("%q is not a JSON pointer: write '~' as ~0 and '/' inside a key as ~1", p)
			}
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// removePointer deletes the value tokens name from doc, if it is there,
// and then the maps and lists the deletion left empty.
func removePointer(doc map[string]any, tokens []string) {
	removeAt(doc, tokens)
}

// removeAt deletes tokens from node. It returns node as it is now (a list
// shrinks into a new slice header) and whether the deletion emptied it.
func removeAt(node any, tokens []string) (any, bool) {
	if len(tokens) == 0 {
		return node, false
	}
	head, rest := tokens[0], tokens[1:]
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[head]
		if !ok {
			return n, false
		}
		if len(rest) == 0 {
			delete(n, head)
			return n, len(n) == 0
		}
		child, emptied := removeAt(child, rest)
		if emptied {
			delete(n, head)
			return n, len(n) == 0
		}
		n[head] = child
		return n, false
	case []any:
		i, err := strconv.Atoi(head)
		if err != nil || i < 0 || i >= len(n) {
			return n, false
		}
		if len(rest) == 0 {
			n = append(n[:i:i], n[i+1:]...)
			return n, len(n) == 0
		}
		child, emptied := removeAt(n[i], rest)
		if emptied {
			n = append(n[:i:i], n[i+1:]...)
			return n, len(n) == 0
		}
		n[i] = child
		return n, false
	}
	return node, false
}
