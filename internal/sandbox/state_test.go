package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaimStateSweepsTheDead: a worker's start removes what a worker that
// died left in the shared state directory (its gVisor container's state,
// its bundle and slots, the directories of the layout before), and leaves
// a running worker's directory alone.
func TestClaimStateSweepsTheDead(t *testing.T) {
	stateDir := t.TempDir()
	for _, legacy := range []string{"runsc", "bundles/ferry-0123"} {
		if err := os.MkdirAll(filepath.Join(stateDir, legacy), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	running, err := ClaimState(stateDir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	if running.SweptDirs != 2 || running.SweptContainers != 0 {
		t.Errorf("the first claim swept %d directories and %d containers, want the 2 of the layout before and none", running.SweptDirs, running.SweptContainers)
	}
	dead, err := ClaimState(stateDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if running.Dir == dead.Dir {
		t.Fatal("two workers got the same directory")
	}
	if err := os.MkdirAll(filepath.Join(dead.Dir, "slots", "slot-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	wantContainers := 0
	var root string
	if _, err := exec.LookPath("runsc"); err == nil {
		// The dead worker's sandbox: runsc run killed as the worker's
		// death kills it (Pdeathsig), its state left behind.
		g, err := newGVisor(dead.Dir, GVisor{})
		if err != nil {
			t.Fatal(err)
		}
		sb, err := g.Start(Spec{Args: []string{"/bin/bash", "-c", "read line"}, Env: []string{"PATH=/usr/bin:/bin"}, Mounts: shellMounts()})
		if err != nil {
			t.Fatal(err)
		}
		s := sb.(*started)
		deadline := time.Now().Add(2 * time.Minute)
		for len(containers(t, g.root)) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("runsc lists no container 2 minutes after the start")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-s.done
		root = g.root
		if ids := containers(t, root); len(ids) != 1 {
			t.Fatalf("runsc lists %v after the kill, want the dead worker's one container", ids)
		}
		wantContainers = 1
	} else {
		t.Log("runsc is not installed: no container to sweep")
	}
	// The worker dies: its lock goes with its process.
	_ = dead.lock.Close()

	next, err := ClaimState(stateDir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if next.SweptContainers != wantContainers || next.SweptDirs != 1 {
		t.Errorf("swept %d containers and %d directories, want %d and the dead worker's one", next.SweptContainers, next.SweptDirs, wantContainers)
	}
	for _, gone := range []string{dead.Dir, filepath.Join(stateDir, "runsc"), filepath.Join(stateDir, "bundles")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there (stat: %v)", gone, err)
		}
	}
	if _, err := os.Stat(filepath.Join(running.Dir, stateLock)); err != nil {
		t.Errorf("the running worker's directory was swept: %v", err)
	}
	entries, _ := os.ReadDir(stateDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 { // .claim, running's, next's
		t.Errorf("the state directory holds %v, want the claim lock and the two running workers' directories", names)
	}
}

func containers(t *testing.T, root string) []string {
	t.Helper()
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return nil
	}
	out, err := exec.Command("runsc", "--root", root, "list", "-quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("runsc list: %v: %s", err, out)
	}
	return strings.Fields(string(out))
}
