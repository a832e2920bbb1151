package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/render"
)

func renderTimeout(l render.Limits) time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return render.DefaultLimits().Timeout
}

func displayAppPath(p string) string {
	p = path.Clean("/" + filepath.ToSlash(p))
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// lastLines is a renderer's error output for an error message: all of it
// when short, else its first line (where a crashing Go program says why:
// "fatal error: …", "panic: …", "SIGSEGV: …") and its end.
func lastLines(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	const keep, keepFirst = 2000, 300
	if s == "" {
		return "no error output"
	}
	if len(s) <= keep {
		return s
	}
	first, _, _ := strings.Cut(s, "\n")
	if len(first) > keepFirst {
		first = first[:keepFirst] + "…"
	}
	return first + " … " + s[len(s)-(keep-len(first)):]
}

// RendererName is the renderer's own binary, built beside the worker's
// (make build): the renderer alone (package render and Serve), without
// the worker's Temporal, Kubernetes clients and the rest, whose packages'
// start-up (about 110 ms of init here, 96 MB resident against 56 MB) a
// sandbox's start would pay under gVisor.
const RendererName = "ferry-render"

// RendererBinary is the renderer a worker whose executable is self runs
// in its sandboxes: RendererName beside self where it is, else self in its
// render mode (RenderArg).
func RendererBinary(self string) string {
	bin := filepath.Join(filepath.Dir(self), RendererName)
	if info, err := os.Stat(bin); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
		return bin
	}
	return self
}
