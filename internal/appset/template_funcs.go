package appset

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// argoFuncs are the functions Argo CD's ApplicationSet controller adds to
// Sprig's: normalize, slugify, toYaml, fromYaml and fromYamlArray.
var argoFuncs = template.FuncMap{
	"normalize":     SanitizeName,
	"slugify":       slugify,
	"toYaml":        toYAML,
	"fromYaml":      fromYAML,
	"fromYamlArray": fromYAMLArray,
}

// toYAML is v as YAML, without the final newline.
func toYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// fromYAML reads a YAML object.
func fromYAML(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// fromYAMLArray reads a YAML list.
func fromYAMLArray(s string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, err
	}
	return a, nil
}

// slugify is Argo CD's slugify: [maxSize [smartTruncate]] name. The name
// is normalized (SanitizeName) first, then made a slug as the slug library
// Argo CD uses makes one: '.' and other characters as '-', dashes
// collapsed and trimmed, at most maxSize (default 50) characters, cut at
// the last '-' within them when smartTruncate (default true).
func slugify(args ...any) (string, error) {
	maxSize, smart, name := 50, true, ""
	for i, a := range args {
		var ok bool
		switch i {
		case len(args) - 1:
			name, ok = a.(string)
		case 0:
			maxSize, ok = a.(int)
		case 1:
			smart, ok = a.(bool)
		default:
			ok = true // Argo CD logs extra arguments and goes on
		}
		if !ok {
			return "", fmt.Errorf("slugify: argument %d is %T: write slugify [maxSize (a number) [smartTruncate (true or false)]] name", i+1, a)
		}
	}
	if len(args) == 0 {
		return "", errors.New("slugify: give the name to slugify")
	}
	return makeSlug(SanitizeName(name), maxSize, smart), nil
}

var (
	slugUnauthorized = regexp.MustCompile(`[^a-zA-Z0-9-_]`)
	slugDashes       = regexp.MustCompile(`-+`)
)

// makeSlug is the slug of a normalized name (lower-case ASCII already, so
// no transliteration is left to do).
func makeSlug(s string, maxLen int, smart bool) string {
	s = strings.TrimSpace(s)
	if !smart && len(s) >= maxLen {
		s = s[:max(maxLen, 0)]
	}
	s = slugUnauthorized.ReplaceAllString(s, "-")
	s = slugDashes.ReplaceAllString(s, "-")
	s = strings.Trim(s, "-_")
	if maxLen > 0 && smart && len(s) > maxLen {
		cut := maxLen
		for cut >= 0 && s[cut] != '-' {
			cut--
		}
		if cut < 0 {
			cut = maxLen
		}
		s = s[:cut]
	}
	return s
}
