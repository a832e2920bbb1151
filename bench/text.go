package bench

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"text/template"
)

// The report's sentences live in text/<file>.md.tmpl, one file per
// scenario: {{define "text"}} is the section's text, {{define "what-…"}}
// a figure's description, other blocks the pieces a scenario adds when
// something happened. Go measures and fills a small data struct (a
// textData); the templates say what the numbers mean. TestTexts executes
// every block with its file's data type.
//
// Templates are wrapped for reading: say joins the lines of a paragraph
// into one (a blank line ends a paragraph; table rows and list items keep
// their lines).

//go:embed text/*.md.tmpl
var textFiles embed.FS

// textData is the data of one template file: textFile names it
// (text/<name>.md.tmpl).
type textData interface{ textFile() string }

var textFuncs = template.FuncMap{
	"num":     num,
	"join":    strings.Join,
	"oneLine": oneLine,
	"spread":  spread,
}

var (
	textsOnce sync.Once
	texts     map[string]*template.Template
	textsErr  error
)

// loadTexts parses every template file, each into a set of its own so
// that block names repeat across files.
func loadTexts() (map[string]*template.Template, error) {
	textsOnce.Do(func() {
		texts = map[string]*template.Template{}
		names, err := fs.Glob(textFiles, "text/*.md.tmpl")
		if err != nil {
			textsErr = err
			return
		}
		for _, name := range names {
			file := strings.TrimSuffix(path.Base(name), ".md.tmpl")
			t, err := template.New(file).Option("missingkey=error").Funcs(textFuncs).ParseFS(textFiles, name)
			if err != nil {
				textsErr = fmt.Errorf("report text %s: %w", name, err)
				return
			}
			texts[file] = t
		}
	})
	return texts, textsErr
}

// sayErr executes block of d's template file over d.
func sayErr(d textData, block string) (string, error) {
	all, err := loadTexts()
	if err != nil {
		return "", err
	}
	t := all[d.textFile()]
	if t == nil || t.Lookup(block) == nil {
		return "", fmt.Errorf("report text: no block %q in bench/text/%s.md.tmpl", block, d.textFile())
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, block, d); err != nil {
		return "", fmt.Errorf("report text bench/text/%s.md.tmpl: %w", d.textFile(), err)
	}
	return unwrap(b.String()), nil
}

// say is sayErr for the report: a text that fails (TestTexts keeps that
// from happening) says so in the report instead of losing the run's
// figures.
func say(d textData, block string) string {
	s, err := sayErr(d, block)
	if err != nil {
		return fmt.Sprintf("**%s**\n\n", oneLine(err.Error()))
	}
	return s
}

// unwrap joins the lines of each paragraph of s with a space. A blank line
// ends a paragraph, and a table row ("|") or a list item ("- ") keeps its
// line; the blank lines and the final newline stay as written.
func unwrap(s string) string {
	lines := strings.Split(s, "\n")
	var b strings.Builder
	keep := func(l string) bool { return strings.HasPrefix(l, "|") || strings.HasPrefix(l, "- ") }
	for i, l := range lines {
		if i > 0 {
			prev := lines[i-1]
			if prev == "" || l == "" || keep(prev) || keep(l) {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
