package app

import (
	"fmt"
	"unicode/utf8"
)

// MaxGlobAlternatives bounds brace expansion, which multiplies: "{a,b}{c,d}"
// is four patterns, and nine such groups are 512. A pattern that expands to
// more is refused, when the app is validated and when it renders alike.
const MaxGlobAlternatives = 256

// Glob is a compiled spec.source.directory include or exclude pattern, with
// Argo CD's semantics: it is matched against a file's path relative to the
// app path ("sub/deploy.yaml"); "*" matches any run of characters, "/"
// included, so "*.yaml" matches in subdirectories too; "?" matches one
// character; "[a-z]", "[!a-z]" and "[^a-z]" match classes; "{a,b}" matches
// either alternative and nests; a backslash escapes the next character (a
// brace or comma included); a brace inside a class is literal.
//
// It is the one implementation of these globs: validation compiles them
// (ValidateGlob) and the renderer matches with them. Project, sync window
// and selective-sync patterns are other globs, matched as Argo CD matches
// those (gobwas globs and path.Match, in project_match.go and selection.go).
type Glob struct {
	pattern string
	// alts are the brace-free patterns the braces expand to.
	alts []string
}

// CompileGlob compiles pattern; the error says what is wrong with it,
// without repeating the pattern.
func CompileGlob(pattern string) (*Glob, error) {
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	for _, a := range alts {
		if err := checkGlob(a); err != nil {
			if len(alts) > 1 {
				return nil, fmt.Errorf("alternative %q: %w", a, err)
			}
			return nil, err
		}
	}
	return &Glob{pattern: pattern, alts: alts}, nil
}

// ValidateGlob reports what is wrong with a directory include or exclude
// glob, or nil.
func ValidateGlob(pattern string) error {
	_, err := CompileGlob(pattern)
	return err
}

// String is the pattern as written.
func (g *Glob) String() string { return g.pattern }

// Match reports whether name, a slash-separated path, matches.
func (g *Glob) Match(name string) bool {
	for _, a := range g.alts {
		if matchGlob(a, name) {
			return true
		}
	}
	return false
}

// expandBraces turns the first top-level {…} group into one pattern per
// alternative and recurses, so nested and successive groups expand too:
// "{a,b}/*.{yaml,yml}" gives a/*.yaml, a/*.yml, b/*.yaml and b/*.yml. A
// pattern without braces expands to itself.
func expandBraces(p string) ([]string, error) {
	open, close, commas, err := firstBraceGroup(p)
	if err != nil {
		return nil, err
	}
	if open < 0 {
		return []string{p}, nil
	}
	var out []string
	start := open + 1
	for _, end := range append(commas, close) {
		rest, err := expandBraces(p[:open] + p[start:end] + p[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > MaxGlobAlternatives {
			return nil, fmt.Errorf("its {…} alternatives expand to more than %d patterns: list fewer alternatives", MaxGlobAlternatives)
		}
		start = end + 1
	}
	return out, nil
}

// firstBraceGroup finds the first unescaped '{' outside a class, its
// matching '}' and the commas at its own depth. open is -1 when p has no
// group.
func firstBraceGroup(p string) (open, close int, commas []int, err error) {
	open, depth, inClass := -1, 0, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			// A ']' right after '[' or '[!' is a member, not the end.
			if j := i + 1; j < len(p) && (p[j] == '!' || p[j] == '^') {
				i++
			}
			if j := i + 1; j < len(p) && p[j] == ']' {
				i++
			}
		case c == '{':
			if depth == 0 && open < 0 {
				open = i
			}
			depth++
		case c == '}':
			if depth == 0 {
				return -1, -1, nil, fmt.Errorf("'}' at %d has no matching '{'", i)
			}
			depth--
			if depth == 0 {
				return open, i, commas, nil
			}
		case c == ',' && depth == 1:
			commas = append(commas, i)
		}
	}
	if depth > 0 {
		return -1, -1, nil, fmt.Errorf("'{' at %d has no matching '}'", open)
	}
	return -1, -1, nil, nil
}

// checkGlob reports malformed classes and a trailing backslash, which would
// otherwise just never match.
func checkGlob(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 == len(p) {
				return fmt.Errorf("trailing backslash")
			}
			i++
		case '[':
			_, next, ok := matchClass(p, i, 'x')
			if !ok {
				return fmt.Errorf("'[' at %d has no matching ']'", i)
			}
			i = next - 1
		}
	}
	return nil
}

// matchGlob matches name against a brace-free pattern, backtracking only to
// the last '*' (which suffices because '*' matches every character).
func matchGlob(p, name string) bool {
	pi, ni := 0, 0
	starP, starN := -1, -1
	for ni < len(name) {
		if pi < len(p) {
			r, size := utf8.DecodeRuneInString(name[ni:])
			switch p[pi] {
			case '*':
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				starP, starN = pi, ni
				continue
			case '?':
				pi, ni = pi+1, ni+size
				continue
			case '[':
				if matched, next, ok := matchClass(p, pi, r); ok && matched {
					pi, ni = next, ni+size
					continue
				}
			case '\\':
				if er, esize := utf8.DecodeRuneInString(p[pi+1:]); pi+1 < len(p) && er == r {
					pi, ni = pi+1+esize, ni+size
					continue
				}
			default:
				if p[pi] == name[ni] {
					pi, ni = pi+1, ni+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, size := utf8.DecodeRuneInString(name[starN:])
		starN += size
		pi, ni = starP, starN
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchClass matches r against the class starting at p[i] == '['. It
// returns whether r is in it, the index after the class, and false for ok
// when the class is not closed.
func matchClass(p string, i int, r rune) (matched bool, next int, ok bool) {
	i++
	negate := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negate {
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return matched != negate, i + 1, true
		}
		first = false
		lo, size := classRune(p, i)
		if size == 0 {
			return false, 0, false
		}
		i += size
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			h, hsize := classRune(p, i+1)
			if hsize == 0 {
				return false, 0, false
			}
			hi, i = h, i+1+hsize
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, 0, false
}

func classRune(p string, i int) (rune, int) {
	if p[i] == '\\' {
		if i+1 >= len(p) {
			return 0, 0
		}
		r, size := utf8.DecodeRuneInString(p[i+1:])
		return r, size + 1
	}
	r, size := utf8.DecodeRuneInString(p[i:])
	return r, size
}
