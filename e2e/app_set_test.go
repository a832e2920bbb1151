package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// viewOf is the app as ferry app get -o json prints it.
func viewOf(t *testing.T, name string) contract.View {
	t.Helper()
	var v contract.View
	out := mustFerry(t, "app", "get", name, "-o", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

// TestAppSetPatchAndSyncSelector: ferry app set and patch change a running
// app's spec as argocd's do (a bad one is refused whole, every problem
// named), and ferry app sync -l syncs every app the selector matches and no
// other, each to what its new spec says.
func TestAppSetPatchAndSyncSelector(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "cli-set")
	repo.write(map[string]string{"v1/cm.yaml": configMap("settings", "v1"), "v2/cm.yaml": configMap("settings", "v2")})
	sha := repo.commitAndPush("two versions")
	names := []string{"cliset-a", "cliset-b", "cliset-other"}
	labels := map[string]map[string]string{
		"cliset-a": {"suite": "cliset"}, "cliset-b": {"suite": "cliset"}, "cliset-other": {"suite": "cliset-not"},
	}
	files := map[string]string{}
	for _, n := range names {
		files[n+".yaml"] = withLabels(appYAML(n, repo.URL, "v1", n, false, "3m"), labels[n])
	}
	mustFerry(t, "app", "apply", "-f", writeDir(t, files))
	t.Cleanup(func() {
		for _, n := range names {
			_, _ = ferry(t, "app", "delete", n, "--cascade")
		}
	})

	// set: the path and a sync option; the rest of the spec stays.
	out := mustFerry(t, "app", "set", "cliset-a", "--path", "v2", "--sync-option", "ServerSideApply=true")
	require.Contains(t, out, `application "cliset-a" updated`)
	v := viewOf(t, "cliset-a")
	require.Equal(t, "v2", v.Spec.Source.Path)
	require.Equal(t, "main", v.Spec.Source.TargetRevision)
	require.Equal(t, []string{"CreateNamespace=true", "ServerSideApply=true"}, v.Spec.SyncPolicy.SyncOptions)
	require.Equal(t, "cliset", v.Metadata.Labels["suite"])

	// A bad set is refused whole, with every problem, and changes nothing.
	out, err := ferry(t, "app", "set", "cliset-a", "--path", "v1", "--self-heal", "--sync-option", "Prune=maybe", "--jsonnet-libs", "lib")
	require.Error(t, err, out)
	require.Contains(t, out, "cannot set --self-heal: the app has no automated sync: add --sync-policy automated")
	require.Contains(t, out, "--jsonnet-libs is argocd's, not ferry's")
	out, err = ferry(t, "app", "set", "cliset-a", "--path", "v1", "--sync-option", "Prune=maybe", "--dest-namespace", "Not_A_Namespace")
	require.Error(t, err, out)
	require.Contains(t, out, "nothing was changed")
	require.Contains(t, out, "spec.syncPolicy.syncOptions")
	require.Contains(t, out, "spec.destinations[0].namespace")
	require.Equal(t, "v2", viewOf(t, "cliset-a").Spec.Source.Path)

	// patch: a merge patch of the path, then a JSON patch (argocd's default
	// type) of a label.
	mustFerry(t, "app", "patch", "cliset-b", "--type", "merge", "--patch", `{"spec": {"source": {"path": "v2"}}}`)
	mustFerry(t, "app", "patch", "cliset-b", "--patch", `[{"op": "add", "path": "/metadata/labels/patched", "value": "yes"}]`)
	v = viewOf(t, "cliset-b")
	require.Equal(t, "v2", v.Spec.Source.Path)
	require.Equal(t, map[string]string{"suite": "cliset", "patched": "yes"}, v.Metadata.Labels)
	out, err = ferry(t, "app", "patch", "cliset-b", "--patch", `[{"op": "replace", "path": "/metadata/name", "value": "renamed"}]`)
	require.Error(t, err, out)
	require.Contains(t, out, `metadata.name is "renamed" after the edit`)

	// Once every app has compared with its spec, sync -l syncs the two the
	// selector matches, to v2, and leaves the third alone.
	c := temporalClient(t)
	eventually(t, 2*time.Minute, "the three apps OutOfSync at "+short(sha)+", each with its spec", func() (bool, string) {
		var states []string
		ok := true
		for _, n := range names {
			v, err := queryView(t, c, n)
			if err != nil {
				return false, err.Error()
			}
			ok = ok && v.Status.Sync.Status == app.SyncStatusOutOfSync && v.Status.Sync.Revision == sha
			states = append(states, fmt.Sprintf("%s %s %s", n, v.Status.Sync.Status, short(v.Status.Sync.Revision)))
		}
		return ok, strings.Join(states, "; ")
	})
	eventually(t, time.Minute, "the visibility store lists the apps", func() (bool, string) {
		out := mustFerry(t, "app", "list", "-l", "suite=cliset", "-o", "name")
		return out == "cliset-a\ncliset-b\n", out
	})
	out = mustFerry(t, "app", "sync", "-l", "suite=cliset", "--wait")
	require.Equal(t, 2, strings.Count(out, ": Succeeded:"), out)
	for _, n := range []string{"cliset-a", "cliset-b"} {
		waitApp(t, n, sha, time.Minute)
		for _, r := range regions {
			require.Equal(t, "v2", configMapVersion(t, r, n, "settings"), "%s in %s", n, r)
		}
	}
	require.Equal(t, app.SyncStatusOutOfSync, viewOf(t, "cliset-other").Status.Sync.Status)
	require.Nil(t, viewOf(t, "cliset-other").Status.OperationState)

	// Names and a selector together are refused; a selector matching
	// nothing says so.
	out, err = ferry(t, "app", "sync", "cliset-a", "-l", "suite=cliset")
	require.Error(t, err, out)
	require.Contains(t, out, "give app names or -l/--project, not both")
	out, err = ferry(t, "app", "sync", "-l", "suite=nothing-here")
	require.Error(t, err, out)
	require.Contains(t, out, `no app matches -l "suite=nothing-here"`)
}

// TestAppSetGenerate: ferry appset generate prints the apps a set's list,
// clusters and git generators make, reading the set's repository from the
// real Git server, and applies nothing.
func TestAppSetGenerate(t *testing.T) {
	repo := newRepo(t, "cli-generate")
	repo.write(map[string]string{"envs/dev/cm.yaml": configMap("settings", "dev"), "envs/prod/cm.yaml": configMap("settings", "prod")})
	repo.commitAndPush("two envs")
	set := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: cligen
spec:
  generators:
    - matrix:
        generators:
          - git:
              repoURL: %s
              revision: main
              directories: [{path: "envs/*"}]
          - clusters: {}
  template:
    metadata:
      name: 'cligen-{{path.basename}}-{{name}}'
    spec:
      project: default
      source:
        repoURL: %s
        targetRevision: main
        path: '{{path}}'
      destination:
        name: '{{name}}'
        namespace: 'cligen-{{path.basename}}'
`, repo.URL, repo.URL)
	file := writeFile(t, set)

	var apps []app.Application
	out := mustFerry(t, "appset", "generate", "-f", file, "-o", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &apps), out)
	var got []string
	for _, a := range apps {
		require.Equal(t, "envs/"+strings.Split(a.Metadata.Name, "-")[1], a.Spec.Source.Path, a.Metadata.Name)
		got = append(got, a.Metadata.Name)
	}
	var want []string
	for _, env := range []string{"dev", "prod"} {
		for _, r := range regions {
			want = append(want, "cligen-"+env+"-"+r)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	require.Equal(t, want, got)

	// The table names each app with its destination; nothing was applied.
	table := mustFerry(t, "appset", "generate", file)
	var row []string
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "cligen-prod-"+regions[0] {
			row = f
		}
	}
	require.Equal(t, []string{"cligen-prod-" + regions[0], "default", regions[0] + "/cligen-prod", repo.URL, "envs/prod", "main"}, row, table)
	_, err := ferry(t, "app", "get", "cligen-dev-"+regions[0])
	require.Error(t, err)

	// A template that makes an invalid app is refused, the app named.
	bad := writeFile(t, strings.Replace(set, "namespace: 'cligen-{{path.basename}}'", "namespace: 'Cligen_{{path.basename}}'", 1))
	out, err = ferry(t, "appset", "generate", "-f", bad)
	require.Error(t, err, out)
	require.Contains(t, out, "spec.destination.namespace")
	require.Contains(t, out, "are not valid")
}

// TestAppPatchAndDeleteResource: ferry app patch-resource and
// delete-resource change one of an app's live objects in the regions the
// user names, through the kubeconfig, as argocd's do.
func TestAppPatchAndDeleteResource(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "cli-resource")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("cliresource", repo.URL, "app", "cliresource", false, "3m")))
	t.Cleanup(func() { _, _ = ferry(t, "app", "delete", "cliresource", "--cascade") })
	eventually(t, 2*time.Minute, "the app compared", func() (bool, string) {
		v, err := queryView(t, temporalClient(t), "cliresource")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Revision == sha && len(v.Status.Resources) > 0, string(v.Status.Sync.Status)
	})
	mustFerry(t, "app", "sync", "cliresource", "--wait")

	first, second := regions[0], regions[1]
	out := mustFerry(t, "app", "patch-resource", "cliresource", "--kind", "ConfigMap", "--resource-name", "settings",
		"--region", first, "--patch", `[{"op": "replace", "path": "/data/version", "value": "patched"}]`, "--patch-type", "application/json-patch+json")
	require.Contains(t, out, first+": ConfigMap cliresource/settings patched")
	require.Equal(t, "patched", configMapVersion(t, first, "cliresource", "settings"))
	require.Equal(t, "v1", configMapVersion(t, second, "cliresource", "settings"))

	out, err := ferry(t, "app", "patch-resource", "cliresource", "--kind", "Secret", "--resource-name", "settings", "--patch", `{}`)
	require.Error(t, err, out)
	require.Contains(t, out, `app "cliresource" has no Secret settings in region `+first)

	mustFerry(t, "app", "delete-resource", "cliresource", "--kind", "ConfigMap", "--resource-name", "settings", "--region", second)
	// Foreground: the garbage collector removes it once what it owns is gone.
	eventually(t, time.Minute, "the ConfigMap gone from "+second, func() (bool, string) {
		got := configMapVersion(t, second, "cliresource", "settings")
		return strings.Contains(got, "not found"), got
	})
	require.Equal(t, "patched", configMapVersion(t, first, "cliresource", "settings"))
}
