// Package bench measures Ferry on the real local stack: how long a push
// takes to reach every region, what an idle app costs, how fast apps are
// onboarded, how Ferry's apply compares with kubectl's and Flux's, compare
// and render times, and what fanning out to three regions costs over one.
//
// Each scenario is a function in its own file (push.go, idle.go,
// onboard.go, apply.go, compare.go, render.go, fanout.go); Flux, the peer
// of push, apply and idle, runs from flux.go and flux_*.go. Run drives
// them: it starts the stacks they need with internal/devenv, runs the
// ferry and ferry-worker binaries against them as a user would, and writes
// report.md, results.json and the plots into one directory:
//
//	go run ./bench/cmd/ferry-bench -out bench/out            # everything (make bench)
//	go run ./bench/cmd/ferry-bench -only push -pushes 5     # one scenario, quickly
//
// Nothing here asserts a speed: the report is the record.
package bench
