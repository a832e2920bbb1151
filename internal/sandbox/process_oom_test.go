package sandbox

import "testing"

// Every way Go's runtime (and C) says a command ran out of memory under
// the process sandbox's RLIMIT_DATA is out of memory; other crashes are
// not. The stderr heads are as Go 1.26 writes them (a cgo binary under
// prlimit --data).
func TestSaysOutOfMemory(t *testing.T) {
	for _, c := range []struct {
		stderr string
		oom    bool
	}{
		{"fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw(...)", true},
		{"fatal error: out of memory allocating heap arena metadata\n\nruntime stack:", true},
		{"runtime: out of memory: cannot allocate 8388608-byte block (251920384 in use)\nfatal error: out of memory\n", true},
		{"fatal error: runtime: cannot allocate memory\n", true},
		{"helm: write /tmp/x: cannot allocate memory\n", true},
		// The form seen once in CI: a new thread's stack did not fit.
		{"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\nPC=0x7f00ee078eec m=2 sigcode=18446744073709551610\n\ngoroutine 0 gp=0x2e6ef468cb40 m=2 mp=0x2e6ef46c6808 [idle]:\n", true},
		{"runtime: failed to create new OS thread (have 7 already; errno=12)\nfatal error: newosproc\n", true},
		// A limit on processes is not the memory limit.
		{"runtime: failed to create new OS thread (have 7 already; errno=11)\nruntime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc\n", false},
		{"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]\n", false},
		{"render failed: chart bomb: template: bomb/templates/a.yaml:3: function \"boom\" not defined\n", false},
		{"", false},
	} {
		if got := saysOutOfMemory([]byte(c.stderr)); got != c.oom {
			t.Errorf("saysOutOfMemory(%.70q) = %v, want %v", c.stderr, got, c.oom)
		}
	}
}
