package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// withLabels puts metadata.labels into an appYAML document.
func withLabels(doc string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString("  labels:\n")
	for k, v := range labels {
		b.WriteString("    " + k + ": " + v + "\n")
	}
	return strings.Replace(doc, "spec:\n", b.String()+"spec:\n", 1)
}

// TestListOutputs: ferry app list -o json|yaml|name|wide and -l, as a script
// reads them. Other tests' apps run beside these, so every check selects by
// a label only these apps carry.
func TestListOutputs(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "list")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	dir := writeDir(t, map[string]string{
		"a.yaml": withLabels(appYAML("list-a", repo.URL, "app", "list-a", false, "3m"), map[string]string{"suite": "list", "team": "blue", "env": "prod"}),
		"b.yaml": withLabels(appYAML("list-b", repo.URL, "app", "list-b", false, "3m"), map[string]string{"suite": "list", "team": "blue", "env": "dev"}),
		"c.yaml": withLabels(appYAML("list-c", repo.URL, "app", "list-c", false, "3m"), map[string]string{"suite": "list", "team": "green"}),
	})
	mustFerry(t, "app", "apply", "-f", dir)
	t.Cleanup(func() {
		for _, name := range []string{"list-a", "list-b", "list-c"} {
			_, _ = ferry(t, "app", "delete", name, "--cascade")
		}
	})

	// The apps are listed once the visibility store has them, and compared.
	eventually(t, time.Minute, "the three apps compared, as -o json shows them", func() (bool, string) {
		out := mustFerry(t, "app", "list", "-l", "suite=list", "-o", "json")
		var views []contract.View
		require.NoError(t, json.Unmarshal([]byte(out), &views), out)
		if len(views) != 3 {
			return false, out
		}
		for _, v := range views {
			if v.Status.Sync.Status != app.SyncStatusOutOfSync || v.Status.Sync.Revision != sha {
				return false, v.Metadata.Name + ": " + string(v.Status.Sync.Status)
			}
		}
		return true, ""
	})

	// -o json is an array of what ferry app get -o json prints, sorted by name.
	var views []contract.View
	out := mustFerry(t, "app", "list", "-l", "suite=list", "-o", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &views), out)
	var one contract.View
	require.NoError(t, json.Unmarshal([]byte(mustFerry(t, "app", "get", "list-a", "-o", "json")), &one))
	require.Equal(t, "list-a", views[0].Metadata.Name)
	require.Equal(t, one.Application, views[0].Application)
	require.Equal(t, []string{"list-a", "list-b", "list-c"}, []string{views[0].Metadata.Name, views[1].Metadata.Name, views[2].Metadata.Name})

	// -l takes Kubernetes' selector syntax; -o name prints one name a line.
	require.Equal(t, "list-a\nlist-b\n", mustFerry(t, "app", "list", "-l", "suite=list,team=blue", "-o", "name"))
	require.Equal(t, "list-a\n", mustFerry(t, "app", "list", "-l", "team=blue,env!=dev", "-o", "name"))
	require.Equal(t, "list-c\n", mustFerry(t, "app", "list", "--selector", "suite=list,!env", "-o", "name"))
	require.Empty(t, mustFerry(t, "app", "list", "-l", "suite=list,team=red", "-o", "name"))

	// -o yaml: the same array in YAML.
	var fromYAML []contract.View
	out = mustFerry(t, "app", "list", "-l", "team in (green)", "-o", "yaml")
	require.NoError(t, yaml.Unmarshal([]byte(out), &fromYAML), out)
	require.Len(t, fromYAML, 1, out)
	require.Equal(t, "green", fromYAML[0].Metadata.Labels["team"])

	// -o wide: the columns of argocd app list beside Ferry's.
	lines := strings.Split(strings.TrimSpace(mustFerry(t, "app", "list", "-l", "suite=list,team=green", "-o", "wide")), "\n")
	require.Len(t, lines, 2, lines)
	require.Equal(t, []string{"NAME", "SYNC", "HEALTH", "REVISION", "REGIONS", "NAMESPACE", "SYNCPOLICY", "CONDITIONS", "REPO", "PATH", "TARGET"},
		strings.Fields(lines[0]))
	row := strings.Fields(lines[1])
	require.Equal(t, []string{"list-c", "OutOfSync"}, row[:2])
	require.Equal(t, []string{"list-c", "Manual", "<none>", repo.URL, "app", "main"}, row[5:])

	// Bad flags say what to write instead.
	out, err := ferry(t, "app", "list", "-o", "xml")
	require.Error(t, err)
	require.Contains(t, out, `unknown output format "xml": use one of json, yaml, name, wide`)
	out, err = ferry(t, "app", "list", "-l", "team in blue")
	require.Error(t, err)
	require.Contains(t, out, `--selector "team in blue"`)
}
