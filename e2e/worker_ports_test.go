package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestWorkerMetricsOnlyWhenAsked: a worker started without --metrics-addr
// polls its queue and listens on no port at all; one given FERRY_METRICS_ADDR,
// the flag's twin, serves /healthz there and listens nowhere else.
func TestWorkerMetricsOnlyWhenAsked(t *testing.T) {
	quiet := startWorkerWith(t, "--control")
	waitPolling(t, quiet)
	require.Empty(t, listeningPorts(t, quiet.Pid()), "a worker without --metrics-addr listens on no port")

	addr := freeAddr(t)
	metrics := startWorkerWithEnv(t, []string{"FERRY_METRICS_ADDR=" + addr}, "--control")
	waitPolling(t, metrics)
	eventually(t, time.Minute, "/healthz on "+addr, func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	_, port, _ := strings.Cut(addr, ":")
	want, err := strconv.Atoi(port)
	require.NoError(t, err)
	require.Equal(t, []int{want}, listeningPorts(t, metrics.Pid()), "the worker listens on FERRY_METRICS_ADDR only")
}

// waitPolling waits until the worker polls the control queue.
func waitPolling(t *testing.T, w *worker) {
	t.Helper()
	c := temporalClient(t)
	eventually(t, time.Minute, fmt.Sprintf("worker %d polling queue %s", w.Pid(), contract.TaskQueue), func() (bool, string) {
		resp, err := c.DescribeTaskQueue(context.Background(), contract.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return false, err.Error()
		}
		var ids []string
		for _, p := range resp.GetPollers() {
			if strings.HasPrefix(p.GetIdentity(), w.Identity()) {
				return true, ""
			}
			ids = append(ids, p.GetIdentity())
		}
		return false, fmt.Sprintf("pollers %v", ids)
	})
}

// listeningPorts are the TCP ports process pid listens on, as `ss -ltnp`
// shows them: its socket inodes matched against the kernel's TCP tables.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			require.NoError(t, err)
			ports = append(ports, int(port))
		}
		f.Close()
		require.NoError(t, sc.Err())
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
