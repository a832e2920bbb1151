// Package docs holds Ferry's manual; its tests check that every relative
// link of the manual and of README.md resolves, to a file and, with a
// #fragment, to a heading of it, and that the layout names every package.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	fenceRE   = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	codeRE    = regexp.MustCompile("`[^`\n]*`")
)

func TestLinksResolve(t *testing.T) {
	pages := []string{"../README.md"}
	require.NoError(t, filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	}))
	anchors := map[string]map[string]bool{}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		require.NoError(t, err)
		text := codeRE.ReplaceAllString(fenceRE.ReplaceAllString(string(raw), ""), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links to %s, which does not exist: fix the link or add the page", page, target)
				continue
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if anchors[dest] == nil {
				anchors[dest] = headingAnchors(t, dest)
			}
			if !anchors[dest][frag] {
				t.Errorf("%s links to %s: %s has no heading #%s", page, target, dest, frag)
			}
		}
	}
}

// headingAnchors are the anchors a Markdown renderer gives the headings of
// a page: lower case, punctuation dropped, spaces as dashes, repeats -1, -2.
func headingAnchors(t *testing.T, path string) map[string]bool {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(string(raw), ""), -1) {
		slug := anchor(m[1])
		name := slug
		for i := 1; out[name]; i++ {
			name = slug + "-" + strconv.Itoa(i)
		}
		out[name] = true
	}
	return out
}

func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
