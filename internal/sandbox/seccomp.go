package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in the process sandbox: those that reach
// the kernel's least used and most attacked parts, or would let a render
// leave its namespaces or look into another process, and that no renderer
// or plugin needs. Most need a capability the sandbox does not have
// anyway; the filter also holds where the kernel grants one in a new user
// namespace.
var deniedSyscalls = []string{
	// Namespaces and mounts (clone's namespace flags: namespaceFlags).
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	// Other processes' memory.
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	// The kernel itself.
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key", "acct", "swapon", "swapoff", "reboot", "syslog",
	"open_by_handle_at", "name_to_handle_at", "fanotify_init", "quotactl",
}

// namespaceFlags are clone's flags that make a new namespace.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// seccompPolicy is the process sandbox's filter: deniedSyscalls and clone
// with a namespace flag fail with EPERM; clone3, whose flags a filter
// cannot read, fails with ENOSYS, on which Go and glibc fall back to
// clone; everything else is allowed.
func seccompPolicy() (seccomp.Policy, error) {
	native, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	var names []string
	for _, name := range deniedSyscalls {
		// A call this architecture does not have cannot be made.
		if _, ok := native.SyscallNames[name]; ok {
			names = append(names, name)
		}
	}
	flagsArg := uint32(0)
	if runtime.GOARCH == "s390x" {
		flagsArg = 1 // clone's first two arguments are swapped there
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: names, NamesWithCondtions: []seccomp.NameWithConditions{{
				Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: flagsArg, Operation: seccomp.BitsSet, Value: namespaceFlags}},
			}}},
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}, nil
}

// seccompProgram is seccompPolicy compiled for bwrap's --seccomp: struct
// sock_filter entries in the machine's byte order. A call of another ABI
// than the native one (a 32-bit program on a 64-bit kernel) fails with
// ENOSYS first, so that no other syscall table can go around the filter.
var seccompProgram = sync.OnceValues(func() ([]byte, error) {
	policy, err := seccompPolicy()
	if err != nil {
		return nil, err
	}
	native, _ := arch.GetInfo("")
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	const archOffset = 4 // struct seccomp_data: int nr; __u32 arch; ...
	prologue := []bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)},
	}
	raw, err := bpf.Assemble(append(prologue, insns...))
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, in := range raw {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
})

// seccompFile is a file holding the filter, read from its start: what
// bwrap reads its --seccomp from.
func seccompFile() (*os.File, error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("ferry-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "ferry-seccomp")
	if _, err := f.Write(prog); err != nil {
		f.Close()
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	return f, nil
}
