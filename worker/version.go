package main

import (
	"runtime"
	"runtime/debug"
)

// versionLine is what ferry-worker --version prints: the module's version
// ("(devel)" for a build from a checkout) and the Go toolchain.
func versionLine() string {
	v := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
	}
	return "ferry-worker " + v + " " + runtime.Version()
}
