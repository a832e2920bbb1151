package devenv

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// FollowGoRun makes this process get SIGTERM when its parent exits, if that
// parent is `go run`. go run dies of SIGTERM without passing it on, so
// `go run ./starter dev up` followed by a SIGTERM to go run would otherwise
// leave the stack running under an orphaned ferry.
func FollowGoRun() {
	ppid := os.Getppid()
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline")
	if err != nil {
		return
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) < 2 || filepath.Base(args[0]) != "go" || !slices.Contains(args[1:min(len(args), 4)], "run") {
		return
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return
	}
	if os.Getppid() != ppid { // go run died before prctl took effect
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
