package docgen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// Field is one field of a kind's schema, as a user writes it.
type Field struct {
	Path    string // the JSON path without list indexes: spec.source.helm.valueFiles
	Type    string // string, integer, list of object, map of string, ...
	Doc     string // the first sentence of the Go field's doc comment
	Refused string // why Ferry refuses the field; "" when Ferry reads it
}

// Comments maps "package.Type.Field" to the doc comment of every struct
// field declared in the Go files (tests excepted) of dirs.
func Comments(dirs ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					text := strings.TrimSpace(cmp.Or(fld.Doc.Text(), fld.Comment.Text()))
					for _, name := range fld.Names {
						out[f.Name.Name+"."+ts.Name.Name+"."+name.Name] = text
					}
				}
				return false
			})
		}
	}
	return out, nil
}

// Fields walks t as encoding/json reads it, depth first in declaration
// order. refused says why Ferry refuses a path (nil: none); extra names
// refused paths the type does not have (Argo CD's fields Ferry lacks).
func Fields(t reflect.Type, docs map[string]string, refused func(path string) (string, bool), extra []string) []Field {
	if refused == nil {
		refused = func(string) (string, bool) { return "", false }
	}
	w := walker{docs: docs, refused: refused, seen: map[string]bool{}}
	w.walk(t, "", map[reflect.Type]bool{})
	for _, path := range extra {
		if w.seen[path] {
			continue
		}
		msg, _ := refused(path)
		w.out = append(w.out, Field{Path: path, Type: "-", Refused: cmp.Or(msg, "not supported")})
	}
	return w.out
}

type walker struct {
	docs    map[string]string
	refused func(string) (string, bool)
	seen    map[string]bool
	out     []Field
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

func (w *walker) walk(t reflect.Type, prefix string, onPath map[reflect.Type]bool) {
	t = deref(t)
	if t.Kind() != reflect.Struct || onPath[t] {
		return
	}
	onPath[t] = true
	defer delete(onPath, t)
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" {
			w.walk(f.Type, prefix, onPath)
			continue
		}
		path := join(prefix, cmp.Or(name, f.Name))
		field := Field{Path: path, Type: typeName(f.Type), Doc: firstSentence(w.docs[pkgName(t)+"."+t.Name()+"."+f.Name])}
		if msg, ok := w.refused(path); ok {
			field.Refused = msg
		}
		w.seen[path] = true
		w.out = append(w.out, field)
		if field.Refused == "" && !leaf(f.Type) {
			w.walk(elem(f.Type), path, onPath)
		}
	}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// elem is the struct a field's value holds, through pointers, lists and maps.
func elem(t reflect.Type) reflect.Type {
	t = deref(t)
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = deref(t.Elem())
	}
	return t
}

// leaf: a type that decodes itself or holds no fields.
func leaf(t reflect.Type) bool {
	e := elem(t)
	return e.Kind() != reflect.Struct || reflect.PointerTo(e).Implements(unmarshaler)
}

func typeName(t reflect.Type) string {
	t = deref(t)
	if t.Kind() != reflect.Slice && reflect.PointerTo(t).Implements(unmarshaler) {
		return "any"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "any" // json.RawMessage
		}
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of " + typeName(t.Elem())
	case reflect.Struct:
		return "object"
	}
	return "any"
}

func pkgName(t reflect.Type) string {
	return filepath.Base(t.PkgPath())
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// firstSentence is a doc comment's first sentence, on one line.
func firstSentence(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i+1]
	}
	return doc
}

// FieldPage renders a kind's fields as a Markdown page: title, intro, then
// one table row per field.
func FieldPage(title, intro string, fields []Field) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n<!-- Generated by `make docs` from the Go types and the parser's tables: do not edit. -->\n\n%s\n\n", title, intro)
	b.WriteString("| Field | Type | Ferry | What it is |\n| --- | --- | --- | --- |\n")
	for _, f := range fields {
		status := "read"
		if f.Refused != "" {
			status = "refused: " + f.Refused
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Path, f.Type, cell(status), cell(f.Doc))
	}
	return []byte(b.String())
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
