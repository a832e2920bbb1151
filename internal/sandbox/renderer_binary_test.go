package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRendererBinary: a worker renders with the ferry-render beside its
// own binary when there is an executable one, else with its own binary.
func TestRendererBinary(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "ferry-worker")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := RendererBinary(self); got != self {
		t.Errorf("without ferry-render: %s, want the worker's own %s", got, self)
	}
	render := filepath.Join(dir, RendererName)
	if err := os.WriteFile(render, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RendererBinary(self); got != self {
		t.Errorf("with a ferry-render that is not executable: %s, want the worker's own %s", got, self)
	}
	if err := os.Chmod(render, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := RendererBinary(self); got != render {
		t.Errorf("with ferry-render beside the worker: %s, want %s", got, render)
	}
}
