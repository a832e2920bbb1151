package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"
)

// contextLines is the context of a unified diff, as diff -u's default.
const contextLines = 3

// Unified renders the difference as a unified diff of YAML, "live" against
// "desired", under a header naming the object, as kubectl diff does;
// empty when the sides are equal. Secret values are masked. The text is
// cut at limit bytes (when > 0) with a line saying so.
func (r Result) Unified(name string, limit int) (string, error) {
	if r.Equal() {
		return "", nil
	}
	live, desired := r.Live, r.Desired
	if r.secret {
		live, desired = deepCopy(live), deepCopy(desired)
		MaskSecret(live, desired)
	}
	a, err := toYAML(live)
	if err != nil {
		return "", fmt.Errorf("%s: live object as YAML: %w", name, err)
	}
	b, err := toYAML(desired)
	if err != nil {
		return "", fmt.Errorf("%s: desired object as YAML: %w", name, err)
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: "live/" + name, ToFile: "desired/" + name, Context: contextLines,
	})
	if err != nil {
		return "", fmt.Errorf("%s: diff: %w", name, err)
	}
	return truncate(text, limit), nil
}

func toYAML(m map[string]any) (string, error) {
	if m == nil {
		return "", nil
	}
	data, err := yaml.Marshal(m)
	return string(data), err
}

// truncate cuts text at the last line that fits in limit bytes.
func truncate(text string, limit int) string {
	if limit <= 0 || len(text) <= limit {
		return text
	}
	cut := strings.LastIndexByte(text[:limit], '\n')
	if cut < 0 {
		cut = 0
	}
	return text[:cut+1] + fmt.Sprintf("... diff cut at %d of %d bytes\n", cut+1, len(text))
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopy(t)
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = copyValue(e)
		}
		return l
	}
	return v
}
