package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

// writeDir writes files (name -> content) into a new directory.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// listedApps is the NAME column of ferry app list, with each app's row.
func listedApps(t *testing.T) map[string]string {
	t.Helper()
	rows := map[string]string{}
	for _, line := range strings.Split(mustFerry(t, "app", "list"), "\n")[1:] {
		if fields := strings.Fields(line); len(fields) > 0 {
			rows[fields[0]] = line
		}
	}
	return rows
}

// TestApplyManyFromDirectory: ferry app apply -f DIR applies every app in
// it with one command and one line each, in file order; they all sync.
func TestApplyManyFromDirectory(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "many")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	names := []string{"many-a", "many-b", "many-c"}
	dir := writeDir(t, map[string]string{
		"1-a.yaml":  appYAML(names[0], repo.URL, "app", names[0], true, "3m"),
		"2-b.yml":   appYAML(names[1], repo.URL, "app", names[1], true, "3m"),
		"3-c.yaml":  appYAML(names[2], repo.URL, "app", names[2], true, "3m"),
		"README.md": "not an Application: skipped",
	})

	out := mustFerry(t, "app", "apply", "-f", dir, "--parallel", "2")
	require.Equal(t, `application "many-a" applied (workflow app/many-a)
application "many-b" applied (workflow app/many-b)
application "many-c" applied (workflow app/many-c)
`, out)
	for _, name := range names {
		waitApp(t, name, sha, 3*time.Minute)
		require.Contains(t, mustFerry(t, "app", "get", name), "Synced")
	}
	eventually(t, time.Minute, "ferry app list shows the three Synced", func() (bool, string) {
		rows := listedApps(t)
		for _, name := range names {
			if f := strings.Fields(rows[name]); len(f) < 2 || f[1] != "Synced" {
				return false, "row " + name + ": " + rows[name]
			}
		}
		return true, ""
	})

	// Applying the same directory again is a no-op update of each.
	require.Equal(t, out, mustFerry(t, "app", "apply", "-f", dir))

	for _, name := range names {
		mustFerry(t, "app", "delete", name, "--cascade")
	}
}

// TestApplyManyInvalidFileAppliesNone: one bad file in a directory, and
// none of its apps is applied; the error names the bad file and its problem.
func TestApplyManyInvalidFileAppliesNone(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	names := []string{"many-bad-a", "many-bad-b", "many-bad-c"}
	const repoURL = "http://127.0.0.1:1/none.git"
	dir := writeDir(t, map[string]string{
		"a.yaml": appYAML(names[0], repoURL, "app", names[0], true, "3m"),
		"b.yaml": strings.Replace(appYAML(names[1], repoURL, "app", names[1], true, "3m"), "name: "+regions[0], "name: mars", 1),
		"c.yaml": appYAML(names[2], repoURL, "app", names[2], true, "3m"),
	})

	out, err := ferry(t, "app", "apply", "-f", dir)
	require.Error(t, err, out)
	require.Contains(t, out, "nothing was applied")
	require.Contains(t, out, filepath.Join(dir, "b.yaml")+`: application "many-bad-b": `)
	require.Contains(t, out, `unknown region "mars"`)
	require.NotContains(t, out, "applied (workflow")

	// A second file naming an app already given is refused the same way.
	dup := writeDir(t, map[string]string{"again.yaml": appYAML(names[0], repoURL, "app", "other", true, "3m")})
	out, err = ferry(t, "app", "apply", "-f", filepath.Join(dir, "a.yaml"), "-f", dup)
	require.Error(t, err, out)
	require.Contains(t, out, filepath.Join(dup, "again.yaml")+`: app "many-bad-a" is also in `+filepath.Join(dir, "a.yaml"))

	rows := listedApps(t)
	for _, name := range names {
		require.NotContains(t, rows, name)
		_, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
		var notFound *serviceerror.NotFound
		require.True(t, errors.As(err, &notFound), "no workflow started for %s: %v", name, err)
	}
}
