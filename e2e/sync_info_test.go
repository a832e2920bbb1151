package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSyncInfoAndRetryMessages: ferry app sync --info name=value records
// the info on the operation, as Argo CD's TestSyncWithInfos expects of
// argocd app sync --info (status.operationState.operation.info); get shows
// it. A sync whose wave 0 fails, retried twice, says so in the words of
// Argo CD's controller: "ERR. Retrying attempt #1 at 3:04PM." while it
// waits, "ERR (retried 2 times)." at the end. Bad --info is refused. The
// operation names who asked for it (initiatedBy.username): the CLI's
// Temporal client identity, ferry-cli:USER@HOST.
func TestSyncInfoAndRetryMessages(t *testing.T) {
	startWorker(t)
	const name = "syncinfo"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/pod.yaml": failingPod("fails", "0"),
		"app/cm.yaml":  inWave(configMap("later", "v1"), "1"),
	})
	repo.commitAndPush("a wave that fails")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})

	for args, want := range map[string]string{
		"name1":       `--info: "name1": want name=value`,
		"=val1":       `--info: "=val1": the name is empty: want name=value`,
		"my name=val": `--info: "my name=val": a name holds no white space`,
	} {
		out, err := ferry(t, "app", "sync", name, "--info", args)
		require.Error(t, err, out)
		require.Contains(t, out, fmt.Sprintf("app %q: %s", name, want))
	}
	require.Nil(t, lastOpOrNil(t, name), "a refused sync starts no operation")

	info := []app.Info{{Name: "name1", Value: "val1"}, {Name: "name2", Value: "val2"}}
	mustFerry(t, "app", "sync", name, "--info", "name1=val1", "--info", "name2=val2",
		"--retry-limit", "2", "--retry-backoff-duration", "15s", "--retry-backoff-max-duration", "15s")
	waiting := regexp.MustCompile(`\. Retrying attempt #1 at \d{1,2}:\d\d[AP]M\.$`)
	eventually(t, 2*time.Minute, name+" waits for its first retry", func() (bool, string) {
		op, why := pollOp(t, name)
		if op == nil {
			return false, why
		}
		return op.Phase == app.OperationRunning && op.RetryCount == 1 && waiting.MatchString(op.Message), op.Message
	})
	by := cliIdentity(t)
	out := mustFerry(t, "app", "get", name)
	require.Contains(t, out, "Sync Info:     name1: val1\nSync Info:     name2: val2\nInitiated By:  "+by+"\n", out)

	var op *app.OperationState
	eventually(t, 3*time.Minute, name+"'s retries are spent", func() (bool, string) {
		var why string
		if op, why = pollOp(t, name); op == nil {
			return false, why
		}
		return op.Phase == app.OperationFailed, fmt.Sprintf("%s retry %d: %s", op.Phase, op.RetryCount, op.Message)
	})
	require.EqualValues(t, 2, op.RetryCount)
	require.True(t, strings.HasSuffix(op.Message, " (retried 2 times)."), op.Message)
	require.NotContains(t, op.Message, "Retrying attempt", "the final message is the last attempt's")
	require.NotNil(t, op.Operation)
	require.ElementsMatch(t, info, op.Operation.Info)
	require.Equal(t, &app.InitiatedBy{Username: by}, op.Operation.InitiatedBy, "kept through the retries")

	out = mustFerry(t, "app", "get", name, "-o", "json")
	var obj struct {
		Status struct {
			OperationState struct {
				Message   string `json:"message"`
				Operation struct {
					Info        []app.Info `json:"info"`
					InitiatedBy struct {
						Username string `json:"username"`
					} `json:"initiatedBy"`
				} `json:"operation"`
			} `json:"operationState"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &obj), out)
	require.ElementsMatch(t, info, obj.Status.OperationState.Operation.Info)
	require.Equal(t, by, obj.Status.OperationState.Operation.InitiatedBy.Username)
	require.Equal(t, op.Message, obj.Status.OperationState.Message)
	out = mustFerry(t, "app", "get", name)
	require.Contains(t, out, fmt.Sprintf("Operation:     %s Failed: %s\nSync Info:     name1: val1\n", op.ID, op.Message), out)

	// A sync without --info keeps none.
	repo.write(map[string]string{"app/pod.yaml": configMap("fine", "v1")})
	repo.commitAndPush("the wave syncs")
	mustFerry(t, "app", "sync", name, "--prune", "--wait")
	v, err := queryView(t, c, name)
	require.NoError(t, err)
	require.Equal(t, app.OperationSucceeded, v.Status.OperationState.Phase, v.Status.OperationState.Message)
	require.NotNil(t, v.Status.OperationState.Operation)
	require.Empty(t, v.Status.OperationState.Operation.Info, "no info asked, none kept")
	require.Equal(t, &app.InitiatedBy{Username: by}, v.Status.OperationState.Operation.InitiatedBy)

	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}

// cliIdentity is the identity ferry app sync names as the sync's
// initiatedBy: the user running it and the host.
func cliIdentity(t *testing.T) string {
	u, err := user.Current()
	require.NoError(t, err)
	host, err := os.Hostname()
	require.NoError(t, err)
	return "ferry-cli:" + u.Username + "@" + host
}

// lastOpOrNil is the app's operation, nil before its first.
func lastOpOrNil(t *testing.T, name string) *app.OperationState {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	return v.Status.OperationState
}
