package devenv

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group, so Stop can kill it
// with whatever it started, and asks the kernel to kill it if its parent dies
// first (a crashed test binary or `ferry dev up` leaves nothing behind).
//
// Pdeathsig fires when the thread that forked the child exits; the Go
// runtime only ends threads that a goroutine locked and never unlocked, and
// nothing in this package locks one.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// unprivilegedID is the user and group a program that refuses root runs as,
// inside its own user namespace.
const unprivilegedID = 1000

// unprivilegedProcAttr is sysProcAttr for a program that refuses to run as
// root (PostgreSQL). Started by root, it runs as an ordinary user of a new
// user namespace that maps that user onto root: the files it writes stay
// root's, it reaches a state dir under /root, and it has no capabilities.
// Started by anyone else, it runs as that user.
func unprivilegedProcAttr() (*syscall.SysProcAttr, error) {
	attr := sysProcAttr()
	if os.Getuid() != 0 {
		return attr, nil
	}
	attr.Cloneflags = syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: unprivilegedID, HostID: 0, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: unprivilegedID, HostID: 0, Size: 1}}
	return attr, nil
}
