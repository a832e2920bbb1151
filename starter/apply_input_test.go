package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

var testValidateOptions = app.ValidateOptions{Regions: regions.Of("us-east-1", "eu-west-1")}

// testApp is an Application named name to region us-east-1, in YAML.
func testApp(name string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: " + name + "\nspec:\n" +
		"  source:\n    repoURL: http://127.0.0.1:1/" + name + ".git\n    path: app\n" +
		"  destination:\n    name: us-east-1\n    namespace: " + name + "\n"
}

// testAppJSON is testApp in JSON.
func testAppJSON(name string) string {
	return `{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "` + name + `"},
 "spec": {"source": {"repoURL": "http://127.0.0.1:1/` + name + `.git", "path": "app"},
  "destination": {"name": "eu-west-1", "namespace": "` + name + `"}}}`
}

// writeFiles writes files (path relative to dir -> content) and returns dir.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return dir
}

// collected returns the sources and app names of inputs.
func collected(inputs []applyInput) (sources, names []string) {
	for _, in := range inputs {
		sources = append(sources, in.source)
		names = append(names, in.app.Metadata.Name)
	}
	return sources, names
}

func TestCollectApplyInputs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.yaml":          testApp("bravo"),
		"a.yml":           testApp("alpha"),
		"c.json":          testAppJSON("charlie"),
		"README.md":       "not an Application",
		"notes.txt":       "neither",
		"sub/d.yaml":      testApp("delta"),
		"sub/deep/e.yml":  testApp("echo"),
		"single.yaml.bak": "ignored too",
	})
	other := writeFiles(t, map[string]string{"f.yaml": testApp("foxtrot")})
	j := func(p string) string { return filepath.Join(dir, p) }

	cases := []struct {
		name        string
		values      []string
		recursive   bool
		stdin       string
		wantSources []string
		wantNames   []string
	}{
		{name: "one file", values: []string{j("b.yaml")},
			wantSources: []string{j("b.yaml")}, wantNames: []string{"bravo"}},
		{name: "stdin", values: []string{"-"}, stdin: testAppJSON("golf"),
			wantSources: []string{"-"}, wantNames: []string{"golf"}},
		{name: "directory: its yaml, yml and json files, sorted, not recursive", values: []string{dir},
			wantSources: []string{j("a.yml"), j("b.yaml"), j("c.json")}, wantNames: []string{"alpha", "bravo", "charlie"}},
		{name: "directory, recursive", values: []string{dir}, recursive: true,
			wantSources: []string{j("a.yml"), j("b.yaml"), j("c.json"), j("sub/d.yaml"), j("sub/deep/e.yml")},
			wantNames:   []string{"alpha", "bravo", "charlie", "delta", "echo"}},
		{name: "repeated -f keeps the order given", values: []string{other, "-", j("sub/d.yaml")}, stdin: testApp("golf"),
			wantSources: []string{filepath.Join(other, "f.yaml"), "-", j("sub/d.yaml")},
			wantNames:   []string{"foxtrot", "golf", "delta"}},
		{name: "a file named twice is read once", values: []string{dir, j("b.yaml"), "-", "-"}, stdin: testApp("golf"),
			wantSources: []string{j("a.yml"), j("b.yaml"), j("c.json"), "-"},
			wantNames:   []string{"alpha", "bravo", "charlie", "golf"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inputs, err := collectApplyInputs(tc.values, tc.recursive, strings.NewReader(tc.stdin), testValidateOptions)
			require.NoError(t, err)
			sources, names := collected(inputs)
			require.Equal(t, tc.wantSources, sources)
			require.Equal(t, tc.wantNames, names)
		})
	}
}

// TestCollectApplyInputsOneBadFile: with one file, the error is what
// ferry app apply -f FILE has always said.
func TestCollectApplyInputsOneBadFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"region.yaml": strings.Replace(testApp("alpha"), "us-east-1", "mars", 1),
		"two.yaml":    testApp("alpha") + "---\n" + testApp("bravo"),
	})

	_, err := collectApplyInputs([]string{filepath.Join(dir, "region.yaml")}, false, nil, testValidateOptions)
	require.EqualError(t, err, filepath.Join(dir, "region.yaml")+": "+
		app.Validate(mustParse(t, strings.Replace(testApp("alpha"), "us-east-1", "mars", 1)), testValidateOptions).Error())
	require.True(t, app.IsValidationError(err))

	_, err = collectApplyInputs([]string{filepath.Join(dir, "two.yaml")}, false, nil, testValidateOptions)
	require.ErrorIs(t, err, app.ErrNotOneApplication, "a file with several documents is still refused")
	require.ErrorContains(t, err, filepath.Join(dir, "two.yaml")+": parse Application")

	_, err = collectApplyInputs([]string{filepath.Join(dir, "missing.yaml")}, false, nil, testValidateOptions)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.True(t, strings.HasPrefix(err.Error(), "read application: open "), err.Error())

	_, err = collectApplyInputs([]string{"-"}, false, strings.NewReader(""), testValidateOptions)
	require.ErrorIs(t, err, app.ErrNotOneApplication)
	require.True(t, strings.HasPrefix(err.Error(), "-: parse Application"), err.Error())
}

// TestCollectApplyInputsBadFilesListedTogether: every bad file is named with
// its own error, and nothing is returned to apply.
func TestCollectApplyInputsBadFilesListedTogether(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"1-good.yaml":    testApp("alpha"),
		"2-region.yaml":  strings.Replace(testApp("bravo"), "us-east-1", "mars", 1),
		"3-syntax.yaml":  testApp("charlie") + "  source: [\n",
		"4-good.json":    testAppJSON("delta"),
		"5-several.yaml": testApp("echo") + "---\n" + testApp("foxtrot"),
		"6-same.yml":     testApp("alpha"),
	})
	j := func(p string) string { return filepath.Join(dir, p) }
	inputs, err := collectApplyInputs([]string{dir, j("missing.yaml")}, false, nil, testValidateOptions)
	require.Nil(t, inputs, "nothing to apply")
	var invalid *invalidInputsError
	require.ErrorAs(t, err, &invalid)
	lines := strings.Split(err.Error(), "\n")
	require.Equal(t, "nothing was applied: 5 problems with the 7 files given: fix and apply again:", lines[0])
	want := []string{
		j("2-region.yaml") + `: application "bravo": `,
		j("3-syntax.yaml") + ": parse Application: YAML syntax error on line",
		j("5-several.yaml") + ": parse Application: expected exactly one Application: found 2 YAML documents",
		j("6-same.yml") + `: app "alpha" is also in ` + j("1-good.yaml") + ": each app comes from one file",
		j("missing.yaml") + ": read application: open " + j("missing.yaml"),
	}
	require.Len(t, lines, 1+len(want), err.Error())
	for i, w := range want {
		require.True(t, strings.HasPrefix(lines[i+1], "  "+w), "line %d: want prefix %q, got %q", i+1, w, lines[i+1])
	}
	require.Contains(t, lines[1], `unknown region "mars"`)
}

// TestCollectApplyInputsDuplicates: two files naming one app are refused,
// naming both, even when one of them has other mistakes too.
func TestCollectApplyInputsDuplicates(t *testing.T) {
	a := writeFiles(t, map[string]string{"guestbook.yaml": testApp("guestbook")})
	b := writeFiles(t, map[string]string{"gb.json": strings.Replace(testAppJSON("guestbook"), "eu-west-1", "mars", 1)})
	fa, fb := filepath.Join(a, "guestbook.yaml"), filepath.Join(b, "gb.json")
	_, err := collectApplyInputs([]string{fa, fb}, false, nil, testValidateOptions)
	require.ErrorContains(t, err, "nothing was applied: 2 problems with the 2 files given")
	require.ErrorContains(t, err, "\n  "+fb+`: application "guestbook": `)
	require.ErrorContains(t, err, "\n  "+fb+`: app "guestbook" is also in `+fa+": each app comes from one file: delete or rename one of them")

	_, err = collectApplyInputs([]string{fa, "-"}, false, strings.NewReader(testApp("guestbook")), testValidateOptions)
	require.ErrorContains(t, err, `-: app "guestbook" is also in `+fa)
}

func TestCollectApplyInputsEmptyDirectory(t *testing.T) {
	empty := writeFiles(t, map[string]string{"README.md": "no Applications here", "sub/a.yaml": testApp("alpha")})
	_, err := collectApplyInputs([]string{empty}, false, nil, testValidateOptions)
	require.EqualError(t, err, empty+": directory holds no *.yaml, *.yml or *.json file: point -f at the Applications' files; add -R to read its subdirectories")

	inputs, err := collectApplyInputs([]string{empty}, true, nil, testValidateOptions)
	require.NoError(t, err)
	_, names := collected(inputs)
	require.Equal(t, []string{"alpha"}, names)

	// Beside other inputs it is listed with them.
	good := writeFiles(t, map[string]string{"b.yaml": testApp("bravo")})
	_, err = collectApplyInputs([]string{filepath.Join(good, "b.yaml"), empty}, false, nil, testValidateOptions)
	var invalid *invalidInputsError
	require.ErrorAs(t, err, &invalid)
	require.ErrorContains(t, err, "nothing was applied: 1 problem with the 1 file given")
	require.ErrorContains(t, err, "\n  "+empty+": directory holds no")
	require.False(t, errors.Is(err, fs.ErrNotExist))
}

func mustParse(t *testing.T, yaml string) *app.Application {
	t.Helper()
	a, err := app.Parse([]byte(yaml))
	require.NoError(t, err)
	return a
}
