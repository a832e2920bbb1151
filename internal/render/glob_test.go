package render

import (
	"strings"
	"testing"
)

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
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tc.pattern, err)
			continue
		}
		for _, name := range tc.match {
			if !g.match(name) {
				t.Errorf("%q does not match %q", tc.pattern, name)
			}
		}
		for _, name := range tc.noMatch {
			if g.match(name) {
				t.Errorf("%q matches %q", tc.pattern, name)
			}
		}
	}
}

func TestGlobErrors(t *testing.T) {
	for _, p := range []string{"{a,b", "a}", "[abc", `abc\`, strings.Repeat("{a,b}", 11)} {
		if _, err := compileGlob(p); err == nil {
			t.Errorf("compileGlob(%q): no error", p)
		}
	}
}
