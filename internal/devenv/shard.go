package devenv

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShardEnv names the share of a test package's tests that one run takes:
// FERRY_TEST_SHARD=K/N runs the K-th of N shares, so that N runs of the
// same package, each with its own stack, side by side, run every test once.
// make test runs the e2e package so (hack/test.sh).
const ShardEnv = "FERRY_TEST_SHARD"

// applyShard narrows this run to its share of spec (K/N, or "" for all):
// the package's tests, by name, are dealt out in turn to the N shares, and
// the others are skipped (-test.skip), so that a -run still applies.
// go test runs a test binary in its package's directory, whose _test.go
// files name the tests.
func applyShard(spec string) error {
	if spec == "" {
		return nil
	}
	k, n, err := parseShard(spec)
	if err != nil {
		return err
	}
	skip := flag.Lookup("test.skip")
	if skip == nil || skip.Value.String() != "" {
		return fmt.Errorf("%s=%s: it skips the tests of other shares itself; drop -skip, or unset %s", ShardEnv, spec, ShardEnv)
	}
	names, err := testNames(".")
	if err != nil {
		return fmt.Errorf("%s=%s: %w", ShardEnv, spec, err)
	}
	if pattern := skipPattern(names, k, n); pattern != "" {
		return skip.Value.Set(pattern)
	}
	return nil
}

// skipPattern matches the names (sorted) not in share k of n: they are
// dealt out in turn, so that every name is in exactly one share.
func skipPattern(names []string, k, n int) string {
	var others []string
	for i, name := range names {
		if i%n != k-1 {
			others = append(others, regexp.QuoteMeta(name))
		}
	}
	if len(others) == 0 {
		return ""
	}
	return "^(" + strings.Join(others, "|") + ")$"
}

func parseShard(spec string) (k, n int, err error) {
	ks, ns, ok := strings.Cut(spec, "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	if !ok || kerr != nil || nerr != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("%s=%q: want K/N with 1 <= K <= N, for example 1/2", ShardEnv, spec)
	}
	return k, n, nil
}

// testNames returns the names of the top-level tests (func TestX(t
// *testing.T)) of the _test.go files in dir, sorted.
func testNames(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && isTest(fn) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no tests in the _test.go files of %s", dir)
	}
	slices.Sort(names)
	return names, nil
}

// isTest: a function go test runs as a test, TestX(t *testing.T).
func isTest(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if fn.Recv != nil || !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if first, _ := utf8.DecodeRuneInString(name[len("Test"):]); unicode.IsLower(first) {
		return false // Testify, not a test
	}
	params := fn.Type.Params.List
	if len(params) != 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}
