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
	out, err := exec.Command("/bin/bash", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("bash printed %q", out)
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
	if p, ok := readHostProcess(pid); ok {
		return fmt.Errorf("the orphan %d (%s, state %s) is left after Close", pid, p.comm, p.state)
	}
	return nil
}
