package devenv

import "syscall"

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
