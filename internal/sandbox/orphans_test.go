package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOrphansEndsWhatOutlivedItsParent starts a command that leaves a
// process of its own session behind, as runsc run does with its sandbox
// when it is killed: the orphan becomes this process's child, and Close
// ends it and reaps it, so that nothing is left once the worker exits.
func TestOrphansEndsWhatOutlivedItsParent(t *testing.T) {
	orphans, err := AdoptOrphans(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/bash", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("bash printed %q", out)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		p, ok := readHostProcess(pid)
		if !ok {
			t.Fatalf("the orphan %d is gone before Close", pid)
		}
		if p.ppid == os.Getpid() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphan %d has parent %d, want this process %d (the subreaper)", pid, p.ppid, os.Getpid())
		}
		time.Sleep(10 * time.Millisecond)
	}
	orphans.Close(10 * time.Second)
	if p, ok := readHostProcess(pid); ok {
		t.Errorf("the orphan %d (%s, state %s) is left after Close", pid, p.comm, p.state)
	}
}
