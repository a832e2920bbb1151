//go:build !linux

package devenv

import "syscall"

// sysProcAttr puts the child in its own process group so Stop can kill it
// with whatever it started. Only Linux has a parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
