package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// TestSeccompPolicyNamesRealSyscalls: every syscall the filter denies is
// one of amd64's, so that none is dropped for a typo.
func TestSeccompPolicyNamesRealSyscalls(t *testing.T) {
	for _, name := range append(deniedSyscalls, "clone", "clone3") {
		if _, ok := arch.X86_64.SyscallNames[name]; !ok {
			t.Errorf("%q is not a syscall of amd64", name)
		}
	}
	if _, err := seccompProgram(); err != nil {
		t.Fatal(err)
	}
}

// TestProcessSandboxSeccompFilter calls denied syscalls in the process
// sandbox (perl's syscall, amd64's numbers): each fails with EPERM, clone3
// with ENOSYS; a plain clone (a fork) works.
func TestProcessSandboxSeccompFilter(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the syscall numbers below are amd64's")
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed")
	}
	r := processRunner(t)
	for _, c := range []struct {
		name string
		args string // the syscall's number and arguments
		want unix.Errno
	}{
		{"keyctl", "250, 0, -3, 0", unix.EPERM}, // KEYCTL_GET_KEYRING_ID of the session keyring
		{"add_key", "248, 0, 0, 0, 0, 0", unix.EPERM},
		{"bpf", "321, 0, 0, 0", unix.EPERM},
		{"perf_event_open", "298, 0, 0, -1, -1, 0", unix.EPERM},
		{"userfaultfd", "323, 0", unix.EPERM},
		{"ptrace", "101, 0, 1, 0, 0", unix.EPERM},
		{"setns", "308, 0, 0", unix.EPERM},
		{"mount", "165, 0, 0, 0, 0, 0", unix.EPERM},
		{"unshare", "272, 0x10000000", unix.EPERM},
		{"clone with CLONE_NEWUSER", "56, 0x10000011, 0, 0, 0, 0", unix.EPERM},
		{"clone with CLONE_NEWNET", "56, 0x40000011, 0, 0, 0, 0", unix.EPERM},
		{"clone3", "435, 0, 0", unix.ENOSYS},
		{"init_module", "175, 0, 0, 0", unix.EPERM},
		{"kexec_load", "246, 0, 0, 0, 0", unix.EPERM},
	} {
		script := fmt.Sprintf(`my $r = syscall(%s); print "$r ", $!+0, "\n"`, c.args)
		res := shell(t, r, "perl -e '"+script+"'")
		if want := fmt.Sprintf("-1 %d", int(c.want)); strings.TrimSpace(string(res.Stdout)) != want {
			t.Errorf("%s in the process sandbox: %q %s; want %q (%v)", c.name, res.Stdout, res.Stderr, want, c.want)
		}
	}
	// A fork, clone without namespace flags, works.
	res := shell(t, r, `perl -e 'my $p = fork(); if ($p == 0) { exit 7 } waitpid($p, 0); print $? >> 8, "\n"'`)
	if strings.TrimSpace(string(res.Stdout)) != "7" {
		t.Errorf("a fork in the process sandbox: %q %s", res.Stdout, res.Stderr)
	}
}

// processRunner is the process sandbox, or a skip where bwrap is not
// installed.
func processRunner(t *testing.T) Runner {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (Debian package bubblewrap; .ci/run installs it)")
	}
	r, err := New(ModeProcess, t.TempDir(), GVisor{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
