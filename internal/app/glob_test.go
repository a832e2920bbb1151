package app

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandBraces(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
		wantErr bool
	}{
		{"*.yaml", []string{"*.yaml"}, false},
		{"{a,b}", []string{"a", "b"}, false},
		{"{deploy.yaml,service.yaml}", []string{"deploy.yaml", "service.yaml"}, false},
		{"*.{yaml,yml,json}", []string{"*.yaml", "*.yml", "*.json"}, false},
		{"{a,b}/{c,d}", []string{"a/c", "a/d", "b/c", "b/d"}, false},
		{"{x,{y,z}w}", []string{"x", "yw", "zw"}, false},
		{"{,a}b", []string{"b", "ab"}, false},
		{`\{a,b\}`, []string{`\{a,b\}`}, false},
		{"[{]x", []string{"[{]x"}, false},
		{"{a,b", nil, true},
		{"a}", nil, true},
		{"{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", nil, true}, // 512 patterns
	}
	for _, tt := range tests {
		got, err := expandBraces(tt.pattern)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("expandBraces(%q) = %q, %v; want %q, error %t", tt.pattern, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"*.yaml", []string{"a.yaml", "sub/a.yaml", ".yaml"}, []string{"a.yml", "a.yaml.bak"}},
		{"{*.yml,*.yaml}", []string{"a.yml", "a.yaml", "x/y.yml"}, []string{"a.json"}},
		{"some-directory/*", []string{"some-directory/a.yaml", "some-directory/x/b.json"}, []string{"other/a.yaml", "some-directory"}},
		{"{config.json,env-usw2/*}", []string{"config.json", "env-usw2/a.yaml"}, []string{"env-use1/a.yaml", "sub/config.json"}},
		{"config.yaml", []string{"config.yaml"}, []string{"sub/config.yaml", "config.yaml2"}},
		{"dep?.yaml", []string{"dep1.yaml", "depé.yaml"}, []string{"dep12.yaml"}},
		{"[a-c]*.yaml", []string{"a.yaml", "c1.yaml"}, []string{"d.yaml"}},
		{"[!a-c]*.yaml", []string{"d.yaml"}, []string{"a.yaml"}},
		{"[^a]*", []string{"b"}, []string{"a"}},
		{"[]a]x", []string{"]x", "ax"}, []string{"bx"}},
		{"{a,{b,c}x}.yaml", []string{"a.yaml", "bx.yaml", "cx.yaml"}, []string{"b.yaml"}},
		{"{a,b}{1,2}", []string{"a1", "b2"}, []string{"ab", "1"}},
		{`\*.yaml`, []string{"*.yaml"}, []string{"a.yaml"}},
		{`\é*`, []string{"éa"}, []string{"ea"}},
		{`a\,b{c,d}`, []string{"a,bc", "a,bd"}, []string{"ab"}},
		{"[{]x", []string{"{x"}, []string{"x"}},
		{"**/*.yaml", []string{"a/b/c.yaml"}, []string{"c.yml"}},
		{"", []string{""}, []string{"a"}},
	}
	for _, tc := range tests {
		g, err := CompileGlob(tc.pattern)
		if err != nil {
			t.Errorf("CompileGlob(%q): %v", tc.pattern, err)
			continue
		}
		if g.String() != tc.pattern {
			t.Errorf("CompileGlob(%q).String() = %q", tc.pattern, g.String())
		}
		for _, name := range tc.match {
			if !g.Match(name) {
				t.Errorf("%q does not match %q", tc.pattern, name)
			}
		}
		for _, name := range tc.noMatch {
			if g.Match(name) {
				t.Errorf("%q matches %q", tc.pattern, name)
			}
		}
	}
}

// TestGlobErrors: what is wrong is said without repeating the pattern
// (the caller names it and its field), the alternative at fault included.
func TestGlobErrors(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"{a,b", "'{' at 0 has no matching '}'"},
		{"a}", "'}' at 1 has no matching '{'"},
		{"[abc", "'[' at 0 has no matching ']'"},
		{"[a-", "'[' at 0 has no matching ']'"},
		{`abc\`, "trailing backslash"},
		{"{ok/*.yaml,[}", "'{' at 0 has no matching '}'"}, // the brace is inside the class
		{"{ok/*.yaml,[x}", "'{' at 0 has no matching '}'"},
		{"{a,b}[", `alternative "a[": '[' at 1 has no matching ']'`},
		{strings.Repeat("{a,b}", 11), "its {…} alternatives expand to more than 256 patterns: list fewer alternatives"},
	}
	for _, tt := range tests {
		_, err := CompileGlob(tt.pattern)
		if err == nil || err.Error() != tt.want {
			t.Errorf("CompileGlob(%q) = %v; want error %q", tt.pattern, err, tt.want)
		}
		if err := ValidateGlob(tt.pattern); err == nil {
			t.Errorf("ValidateGlob(%q): no error", tt.pattern)
		}
	}
}

// TestGlobLimit: a pattern may stand for MaxGlobAlternatives patterns, not
// one more, whichever way its groups multiply.
func TestGlobLimit(t *testing.T) {
	at := strings.Repeat("{a,b}", 8) // 2^8 = 256
	g, err := CompileGlob(at)
	if err != nil {
		t.Fatalf("CompileGlob(%q) (%d patterns): %v", at, MaxGlobAlternatives, err)
	}
	if !g.Match("abababab") || !g.Match("bbbbbbbb") || g.Match("abababa") {
		t.Errorf("%q matches the wrong names", at)
	}
	over := []string{
		strings.Repeat("{a,b}", 9),             // 512
		"{" + strings.Repeat("x,", 256) + "y}", // 257 in one group
		strings.Repeat("{a,b,c}", 5) + "{d,e}", // 486
		"{a,b}{" + strings.Repeat("{c,d}", 8) + ",e}",
	}
	for _, p := range over {
		_, err := CompileGlob(p)
		if err == nil || !strings.Contains(err.Error(), "expand to more than 256 patterns") {
			t.Errorf("CompileGlob(%q) = %v; want the limit's error", p, err)
		}
	}
	if _, err := CompileGlob("{" + strings.Repeat("x,", 255) + "y}"); err != nil {
		t.Errorf("256 alternatives in one group: %v", err)
	}
}
