package workflows

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// historyName is NAME-COMMIT-RUN.json: the short commit whose workflow code
// recorded the history (e2e/e2etest.RecordHistories).
var historyName = regexp.MustCompile(`^[a-z0-9-]+-([0-9a-f]{8})-[0-9a-f]{4,8}\.json$`)

// TestHistoriesAreNamedByACommitOfThisBranch: every recorded history names
// the commit that recorded it, and that commit is in this branch's past, so
// that a reader can check out the code that wrote it. A rebase after
// recording gives the code a new commit and leaves the name pointing
// nowhere; this test says which file.
func TestHistoriesAreNamedByACommitOfThisBranch(t *testing.T) {
	if out, err := exec.Command("git", "rev-parse", "--is-shallow-repository").Output(); err != nil {
		t.Skip("not a git checkout: the names cannot be checked here")
	} else if strings.TrimSpace(string(out)) == "true" {
		t.Skip("a shallow clone holds too little history to check the names")
	}
	files, err := filepath.Glob("testdata/histories/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var bad []string
	for _, f := range files {
		name := filepath.Base(f)
		m := historyName.FindStringSubmatch(name)
		if m == nil {
			bad = append(bad, name+": not named NAME-COMMIT-RUN.json")
			continue
		}
		if err := exec.Command("git", "merge-base", "--is-ancestor", m[1], "HEAD").Run(); err != nil {
			bad = append(bad, name+": commit "+m[1]+" is not in this branch's history (record it again from landed code)")
		}
	}
	require.Empty(t, bad, "recorded histories whose names point at no commit of this branch")
}
