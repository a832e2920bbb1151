package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAppManifestsFromGitAndLive: `ferry app manifests` prints what Git
// renders and, with --source live, what runs in each region; Secret values
// are masked either way.
func TestAppManifestsFromGitAndLive(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "manifests-cli")
	repo.write(markedManifests())
	sha := repo.commitAndPush("a secret and a config map")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("manifests-cli", repo.URL, "app", "manifests-cli", true, "3m")))
	waitApp(t, "manifests-cli", sha, 2*time.Minute)

	git := mustFerry(t, "app", "manifests", "manifests-cli")
	assert.Contains(t, git, manifestMarker, "the ConfigMap as Git has it")
	assert.Contains(t, git, "kind: Secret")
	assert.NotContains(t, git, secretMarker, "a Secret's value is masked")
	assert.Contains(t, git, "password: ++++++++")
	assert.Equal(t, 2, strings.Count(git, "---\n"), git)

	live := mustFerry(t, "app", "manifests", "manifests-cli", "--source", "live")
	for _, r := range regions {
		assert.Contains(t, live, "# region: "+r)
	}
	assert.Equal(t, 2*len(regions), strings.Count(live, "---\n"), "two objects in each region:\n%s", live)
	assert.Contains(t, live, "resourceVersion:", "objects as the API server has them")
	assert.Contains(t, live, manifestMarker)
	assert.NotContains(t, live, secretMarker)
	assert.NotContains(t, live, "managedFields")

	one := mustFerry(t, "app", "manifests", "manifests-cli", "--source", "live", "--region", regions[0])
	assert.Equal(t, 2, strings.Count(one, "---\n"), one)
	assert.NotContains(t, one, "# region: "+regions[1])

	out, err := ferry(t, "app", "manifests", "manifests-cli", "--source", "cluster")
	assert.Error(t, err)
	assert.Contains(t, out, `--source "cluster": want git or live`)
}
