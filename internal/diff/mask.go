package diff

import (
	"strings"
)

// maskBase is the mask of a Secret value, as Argo CD shows it; a second
// distinct value of the same key gets one more "+", and so on.
const maskBase = 8

// IsSecret tells whether group and kind name a Secret, whose values are
// masked in every diff shown.
func IsSecret(group, kind string) bool { return group == "" && kind == "Secret" }

// MaskSecret replaces the values of data and stringData in the normalised
// Secrets sides (nil sides are skipped) by masks. Keys stay. Within a key,
// equal values get equal masks and different values different ones, so a
// diff still shows which keys changed, never what they hold.
func MaskSecret(sides ...map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		masks := map[string]map[string]string{} // key -> value -> mask
		for _, side := range sides {
			m, ok := side[field].(map[string]any)
			if !ok {
				continue
			}
			for k, v := range m {
				value, _ := v.(string)
				if masks[k] == nil {
					masks[k] = map[string]string{}
				}
				mask, seen := masks[k][value]
				if !seen {
					mask = strings.Repeat("+", maskBase+len(masks[k]))
					masks[k][value] = mask
				}
				m[k] = mask
			}
		}
	}
	// Annotations may carry a copy of the whole Secret
	// (last-applied-configuration); Normalize already drops that one.
}
