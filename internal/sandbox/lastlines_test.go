package sandbox

import (
	"strings"
	"testing"
)

// A crashing renderer's long traceback keeps its first line, which says
// why, and its end; a short error output is kept whole.
func TestLastLinesKeepsWhyARendererCrashed(t *testing.T) {
	if got := lastLines([]byte("  render failed: bad chart\n")); got != "render failed: bad chart" {
		t.Errorf("short output: %q", got)
	}
	if got := lastLines(nil); got != "no error output" {
		t.Errorf("no output: %q", got)
	}
	trace := "fatal error: runtime: out of memory\n\n" + strings.Repeat("goroutine 1 [running]:\n\tframe +0x1\n", 400) + "rax    0x0\n"
	got := lastLines([]byte(trace))
	if !strings.HasPrefix(got, "fatal error: runtime: out of memory … ") || !strings.HasSuffix(got, "rax    0x0") || len(got) > 2100 {
		t.Errorf("long output (%d bytes): %.120q … %q", len(got), got, got[max(0, len(got)-40):])
	}
}
