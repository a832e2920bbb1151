package bench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template/parse"
)

// allTexts is one value of every textData type; TestTexts checks that it
// lists every type of the package that has a textFile method.
var allTexts = []textData{
	renderText{}, sandboxText{}, pushText{}, fanoutText{}, applyText{}, compareText{}, onboardText{}, pushProbeText{},
	idleText{}, stackText{}, floorText{}, breakdownText{}, onboardCPUText{}, reportText{},
	fluxPushText{}, fluxIdleText{}, objectsText{}, uiText{}, argoPushText{}, peerRatioText{}, argoOnboardText{}, argoIdleText{}, monorepoText{}, gateText{},
}

// TestTexts executes every block of every template file with its data
// type, once empty and once with every field set, so that a field the
// type lacks, a typo or a missing key fails here and not in a run of
// hours; checks that every file and block is used by a say call in the
// code, and that every say call names a block of its data's file.
func TestTexts(t *testing.T) {
	all, err := loadTexts()
	if err != nil {
		t.Fatal(err)
	}
	calls, types := sayCalls(t)

	byFile := map[string]textData{}
	for _, d := range allTexts {
		byFile[d.textFile()] = d
		if all[d.textFile()] == nil {
			t.Errorf("%T: no bench/text/%s.md.tmpl", d, d.textFile())
		}
	}
	for _, typ := range types {
		if !slices.ContainsFunc(allTexts, func(d textData) bool { return reflect.TypeOf(d).Name() == typ }) {
			t.Errorf("type %s has a textFile method but is not in allTexts", typ)
		}
	}
	typeFile := map[string]string{}
	for _, d := range allTexts {
		typeFile[reflect.TypeOf(d).Name()] = d.textFile()
	}
	used := map[string]bool{}
	for _, c := range calls {
		file, ok := typeFile[c.typ]
		switch {
		case !ok:
			t.Errorf("%s: say's data is of type %s, not a textData in allTexts", c.pos, c.typ)
		case all[file] == nil || all[file].Lookup(c.block) == nil:
			t.Errorf("%s: say(%s, %q): no such block in bench/text/%s.md.tmpl", c.pos, c.typ, c.block, file)
		}
		used[file+"/"+c.block] = true
	}

	for file, set := range all {
		for _, tmpl := range set.Templates() {
			if tmpl.Tree != nil {
				templateRefs(tmpl.Tree.Root, func(block string) { used[file+"/"+block] = true })
			}
		}
	}
	for file, set := range all {
		d := byFile[file]
		if d == nil {
			t.Errorf("bench/text/%s.md.tmpl: no textData type names it (allTexts)", file)
			continue
		}
		for _, tmpl := range set.Templates() {
			block := tmpl.Name()
			if block == file+".md.tmpl" {
				// The file itself: only its blocks are said, so text
				// outside them would be lost.
				if tmpl.Tree != nil {
					for _, n := range tmpl.Tree.Root.Nodes {
						if tn, ok := n.(*parse.TextNode); !ok || strings.TrimSpace(string(tn.Text)) != "" {
							t.Errorf("bench/text/%s.md.tmpl: %q outside a {{define}} block", file, n.String())
						}
					}
				}
				continue
			}
			if !used[file+"/"+block] {
				t.Errorf("bench/text/%s.md.tmpl: block %q is not said by any say call", file, block)
			}
			for _, v := range []textData{d, filled(d)} {
				if _, err := sayErr(v, block); err != nil {
					t.Errorf("%T: %v", v, err)
				}
			}
		}
	}
}

// templateRefs calls ref with the name of every {{template}} under n.
func templateRefs(n parse.Node, ref func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				templateRefs(c, ref)
			}
		}
	case *parse.TemplateNode:
		ref(n.Name)
	case *parse.IfNode:
		templateRefs(n.List, ref)
		templateRefs(n.ElseList, ref)
	case *parse.RangeNode:
		templateRefs(n.List, ref)
		templateRefs(n.ElseList, ref)
	case *parse.WithNode:
		templateRefs(n.List, ref)
		templateRefs(n.ElseList, ref)
	}
}

func TestUnwrap(t *testing.T) {
	in := "One\nsentence.\n\n| a |\n| b |\nAfter\nthe table.\n"
	want := "One sentence.\n\n| a |\n| b |\nAfter the table.\n"
	if got := unwrap(in); got != want {
		t.Errorf("unwrap(%q) = %q, want %q", in, got, want)
	}
}

// filled returns d with every exported field set, recursively: strings,
// numbers and booleans non-zero, a slice or map of one element, a pointer
// to a filled value.
func filled(d textData) textData {
	v := reflect.New(reflect.TypeOf(d)).Elem()
	fillValue(v, 0)
	return v.Interface().(textData)
}

func fillValue(v reflect.Value, depth int) {
	if depth > 5 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(2)
	case reflect.Float64, reflect.Float32:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillValue(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillValue(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillValue(k, depth+1)
		fillValue(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fillValue(v.Field(i), depth+1)
		}
	}
}

type sayCall struct {
	pos, typ, block string
}

// sayCalls reads the package's Go files: every say(data, "block") call,
// with the type of its data (a composite literal, or a local variable or
// parameter declared with its type), and every type with a textFile
// method.
func sayCalls(t *testing.T) (calls []sayCall, types []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fn.Name.Name == "textFile" && fn.Recv != nil {
				types = append(types, typeName(fn.Recv.List[0].Type))
			}
			locals := map[string]string{}
			ast.Inspect(fn, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Field:
					for _, id := range n.Names {
						locals[id.Name] = typeName(n.Type)
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						if id, ok := lhs.(*ast.Ident); ok && i < len(n.Rhs) && litType(n.Rhs[i]) != "" {
							locals[id.Name] = litType(n.Rhs[i])
						}
					}
				case *ast.ValueSpec:
					for _, id := range n.Names {
						if n.Type != nil {
							locals[id.Name] = typeName(n.Type)
						}
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); !ok || id.Name != "say" || len(n.Args) != 2 {
						return true
					}
					pos := fset.Position(n.Pos()).String()
					lit, ok := n.Args[1].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: say's block must be a string literal (so that this test checks it)", pos)
						return true
					}
					block, _ := strconv.Unquote(lit.Value)
					typ := litType(n.Args[0])
					if id, ok := n.Args[0].(*ast.Ident); ok {
						typ = locals[id.Name]
					}
					if typ == "" {
						t.Errorf("%s: say's data must be a composite literal or a variable declared with its type", pos)
						return true
					}
					calls = append(calls, sayCall{pos: pos, typ: typ, block: block})
				}
				return true
			})
		}
	}
	return calls, types
}

// typeName is the name of the type an expression declares or builds:
// T, *T, T{…} or &T{…}; "" for anything else.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return typeName(e.X)
		}
	case *ast.CompositeLit:
		return typeName(e.Type)
	}
	return ""
}

// litType is the type of a composite literal T{…} or &T{…}; "" for
// anything else.
func litType(e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	if c, ok := e.(*ast.CompositeLit); ok {
		return typeName(c.Type)
	}
	return ""
}
