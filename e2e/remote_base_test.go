package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRemoteKustomizeBase: an app whose kustomization names a base in
// another repository of the Git server, at a tag, renders in the gVisor
// sandbox (which has no network: the worker fetched the base) and syncs.
// Moving the tag to a new commit of the base renders again without a
// commit of the app, and the automated app syncs what the base now says.
// A refresh with the tag unmoved answers from the manifest cache; a hard
// refresh renders again, as Argo CD's does.
func TestRemoteKustomizeBase(t *testing.T) {
	metrics := freeAddr(t)
	startWorker(t, "--kustomize-allow-remote-bases", "--render-sandbox", "gvisor", "--metrics-addr", metrics)
	base := newRepo(t, "remote-base")
	base.write(map[string]string{"base/kustomization.yaml": "resources:\n- cm.yaml\n", "base/cm.yaml": greetingConfigMap("v1")})
	base.commitAndPush("base v1")
	base.git("tag", "v1")
	base.git("push", "-q", base.URL, "refs/tags/v1")
	repo := newRepo(t, "remote-app")
	repo.write(map[string]string{"app/kustomization.yaml": "resources:\n- " + base.URL + "//base?ref=v1\n"})
	sha := repo.commitAndPush("app on the base's v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("remote", repo.URL, "app", "remote", true, "3m")))
	waitApp(t, "remote", sha, 3*time.Minute)
	require.Equal(t, everywhere("v1"), greetings(t, "remote"))

	base.write(map[string]string{"base/cm.yaml": greetingConfigMap("v2")})
	base.commitAndPush("base v2")
	base.git("tag", "-f", "v1")
	base.git("push", "-q", "-f", base.URL, "refs/tags/v1")
	mustFerry(t, "app", "refresh", "remote")
	eventually(t, 2*time.Minute, "the base's moved tag synced in every region", func() (bool, string) {
		got := greetings(t, "remote")
		return got == everywhere("v2"), got
	})
	waitApp(t, "remote", sha, time.Minute)

	renders := renderCount(t, metrics)
	before := reconciledAt(t, "remote")
	mustFerry(t, "app", "refresh", "remote")
	waitReconciledAfter(t, "remote", before)
	require.Equal(t, renders, renderCount(t, metrics), "a refresh with the tag unmoved answers from the manifest cache")
	mustFerry(t, "app", "refresh", "remote", "--hard")
	eventually(t, time.Minute, "a hard refresh renders again", func() (bool, string) {
		n := renderCount(t, metrics)
		return n > renders, fmt.Sprintf("%d renders, %d before", n, renders)
	})
	waitApp(t, "remote", sha, time.Minute)
	require.Equal(t, everywhere("v2"), greetings(t, "remote"))
	mustFerry(t, "app", "delete", "remote", "--cascade")
}

// renderCount is how many renders the worker at addr has made.
func renderCount(t *testing.T, addr string) int64 {
	var n int64
	for _, line := range strings.Split(scrape(t, addr), "\n") {
		if strings.HasPrefix(line, "ferry_render_duration_seconds_count{") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			n += v
		}
	}
	return n
}
