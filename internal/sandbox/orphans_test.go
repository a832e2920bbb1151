package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// orphansChildEnv makes the test binary run orphansChild: the subreaper is
// set in a process of its own, so that the package's other tests, which
// count the processes under the test, do not inherit it.
const orphansChildEnv = "FERRY_SANDBOX_ORPHANS_CHILD"

// TestOrphansEndsWhatOutlivedItsParent starts a command that leaves a
// process of its own session behind, as runsc run does with its sandbox
// when it is killed: the orphan becomes the reaper's child, and Close ends
// it and reaps it, so that nothing is left once the worker exits.
func TestOrphansEndsWhatOutlivedItsParent(t *testing.T) {
	if os.Getenv(orphansChildEnv) != "" {
		if err := orphansChild(); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphansEndsWhatOutlivedItsParent$")
	cmd.Env = append(os.Environ(), orphansChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// orphansChild runs in the child process: it adopts an orphan and checks
// that Close leaves nothing of it.
func orphansChild() error {
	orphans, err := AdoptOrphans(time.Hour)
	if err != nil {
		return err
	}
	// The orphan has a child of its own, as a sandbox has its stubs: killed,
	// it leaves that child to the reaper too. The child's pid comes in a
	// file: the orphan's output must not hold the pipe open.
	dir, err := os.MkdirTemp("", "orphans-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pidFile := dir + "/grandchild"
	script := `setsid /bin/bash -c 'sleep 600 & echo $! >` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 601' </dev/null >/dev/null 2>&1 & echo $!`
	out, err := exec.Command("/bin/bash", "-c", script).Output()
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("bash printed %q", out)
	}
	var grandchild int
	for deadline := time.Now().Add(time.Minute); grandchild == 0; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(pidFile); err == nil {
			if grandchild, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
				return fmt.Errorf("the orphan wrote %q", data)
			}
		} else if time.Now().After(deadline) {
			return fmt.Errorf("the orphan wrote no pid of its child: %v", err)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		p, ok := readHostProcess(pid)
		if !ok {
			return fmt.Errorf("the orphan %d is gone before Close", pid)
		}
		if p.ppid == os.Getpid() {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the orphan %d has parent %d, want the reaper %d", pid, p.ppid, os.Getpid())
		}
	}
	orphans.Close(10 * time.Second)
	for _, left := range []int{pid, grandchild} {
		if p, ok := readHostProcess(left); ok {
			return fmt.Errorf("the orphan's process %d (%s, state %s, parent %d) is left after Close", left, p.comm, p.state, p.ppid)
		}
	}
	return nil
}
