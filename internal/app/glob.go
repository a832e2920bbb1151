package app

import (
	"errors"
	"fmt"
	"path"
)

// maxGlobAlternatives bounds brace expansion, which grows as the product of
// the lists: "{a,b}{c,d}" is four patterns.
const maxGlobAlternatives = 256

// ExpandBraces expands the {a,b} alternatives of a glob into the plain
// path.Match patterns they stand for: "{a,b}/*.{yaml,yml}" gives a/*.yaml,
// a/*.yml, b/*.yaml and b/*.yml. Argo CD's directory include and exclude
// accept such lists. Braces nest; a backslash escapes a brace or comma; a
// brace inside a [...] class is literal. A pattern without braces expands to
// itself.
func ExpandBraces(pattern string) ([]string, error) {
	openAt, closeAt := findBraces(pattern)
	switch {
	case openAt < 0 && closeAt < 0:
		return []string{pattern}, nil
	case openAt < 0:
		return nil, errors.New("'}' without a matching '{'")
	case closeAt < 0:
		return nil, errors.New("'{' without a matching '}'")
	}
	prefix, body, suffix := pattern[:openAt], pattern[openAt+1:closeAt], pattern[closeAt+1:]
	var out []string
	for _, alt := range splitAlternatives(body) {
		rest, err := ExpandBraces(prefix + alt + suffix)
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxGlobAlternatives {
			return nil, fmt.Errorf("expands to more than %d patterns", maxGlobAlternatives)
		}
	}
	return out, nil
}

// findBraces returns the index of the first unescaped '{' and of its
// matching '}', or of a stray '}' when no '{' comes first.
func findBraces(p string) (openAt, closeAt int) {
	openAt, closeAt = -1, -1
	depth, inClass := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '{':
			if depth == 0 {
				openAt = i
			}
			depth++
		case c == '}':
			if depth == 0 {
				return -1, i
			}
			if depth--; depth == 0 {
				return openAt, i
			}
		}
	}
	return openAt, -1
}

// splitAlternatives splits a brace body at its top-level commas.
func splitAlternatives(body string) []string {
	var alts []string
	depth, inClass, start := 0, false, 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == ',' && depth == 0:
			alts = append(alts, body[start:i])
			start = i + 1
		}
	}
	return append(alts, body[start:])
}

// ValidateGlob reports whether pattern is a valid directory include or
// exclude glob: path.Match syntax with {a,b} alternatives.
func ValidateGlob(pattern string) error {
	pats, err := ExpandBraces(pattern)
	if err != nil {
		return err
	}
	for _, p := range pats {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%q: %w", p, err)
		}
	}
	return nil
}
