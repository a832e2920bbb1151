//go:build !linux

package devenv

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group so Stop can kill it
// with whatever it started. Only Linux has a parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// unprivilegedProcAttr is sysProcAttr for a program that refuses to run as
// root (PostgreSQL); only Linux can run it so for root.
func unprivilegedProcAttr() (*syscall.SysProcAttr, error) {
	if os.Getuid() == 0 {
		return nil, errors.New("PostgreSQL refuses to run as root: start the stack as another user")
	}
	return sysProcAttr(), nil
}
