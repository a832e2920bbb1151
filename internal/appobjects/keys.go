package appobjects

import (
	"fmt"
	"strings"
)

// splitKey splits "namespace/name".
func splitKey(key string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return "", "", fmt.Errorf("application object %q: want namespace/name", key)
	}
	return ns, name, nil
}

func joinProblems(msgs []string) string { return strings.Join(msgs, "; ") }
