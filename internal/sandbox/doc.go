// Package sandbox runs commands, and Ferry's renderer, isolated from the
// worker that starts them: no network, a read-only view of only the
// directories they are given, a small tmpfs as the only writable place, a
// non-root user, an environment of only what they are given, and bounded
// memory, CPU time, file size and output.
//
// A Runner runs one argv in a fresh sandbox. Two kinds exist:
//
//   - gVisor (ModeGVisor): runsc runs an OCI bundle made for the one run,
//     with a read-only root built from bind mounts, --network=none and the
//     memory limit as the container's cgroup limit.
//   - process (ModeProcess): bwrap with its own user, PID, network, IPC and
//     UTS namespaces, no further user namespaces, a seccomp filter, rlimits
//     for memory (RLIMIT_DATA), CPU time and file size set by prlimit before
//     bwrap starts, and a cgroup of its own bounding the memory and the
//     processes of the whole sandbox where the kernel gives one
//     (BoundsWhole says when not).
//
// ModeNone is no sandbox at all: the worker renders in its own process,
// for development only.
//
// Renderer renders sources on top of a Runner, by running the worker's own
// binary in its render mode (see Serve), which sees only the checkout: sent
// with the request as an archive and unpacked read-only into a tmpfs of the
// sandbox's own at /src, or, when it is too large to send, mounted
// read-only:
//
//	runner, _ := sandbox.New(sandbox.ModeGVisor, stateDir, sandbox.GVisor{})
//	r := &sandbox.Renderer{Runner: runner, Binary: self, Settings: settings}
//	res, err := r.Render(ctx, checkout, src, opts)
package sandbox
