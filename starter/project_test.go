package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCollectProjects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	project := func(name string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: " + name + "\nspec:\n  sourceRepos: ['*']\n"
	}
	write("a.yaml", project("team-a"))
	write("b.yaml", project("team-b"))
	ps, err := collectProjects([]string{dir}, strings.NewReader(""))
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, "team-a", ps[0].Metadata.Name)

	write("c.yaml", project("team-a"))
	write("d.yaml", project("default"))
	write("e.yaml", minimalApp)
	_, err = collectProjects([]string{dir}, strings.NewReader(""))
	require.Error(t, err)
	for _, want := range []string{
		"nothing was applied: 2 problems with the 5 files given",
		`c.yaml: project "team-a" is also in`,
		`e.yaml: application "web": kind: found Application`,
	} {
		require.Contains(t, err.Error(), want)
	}
	require.NotContains(t, err.Error(), "d.yaml", "an AppProject named default replaces the built-in default project")

	ps, err = collectProjects([]string{"-"}, strings.NewReader(project("from-stdin")))
	require.NoError(t, err)
	require.Equal(t, "from-stdin", ps[0].Metadata.Name)
}

const minimalApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
spec:
  source: {repoURL: https://git.example.com/apps.git}
  destination: {name: us-east-1}
`
