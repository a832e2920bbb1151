package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestReproduceCarriesTheRunsFlags: a reproduce line names the run's own
// flags that change the figures, and only those that differ from their
// defaults.
func TestReproduceCarriesTheRunsFlags(t *testing.T) {
	cfg := DefaultConfig()
	assert.Equal(t, "make build && go run ./bench/cmd/ferry-bench -only apply -apply-runs 3", cfg.reproduce(ScenarioApply, "-apply-runs 3"))

	cfg.OnboardTimeout = 30 * time.Minute
	cfg.OnboardFloor = false
	cfg.FleetPeers = []string{PeerArgoCD}
	cfg.ArgoAdopt = true
	cfg.WorkerArgs = []string{"--onboard-concurrency", "8"}
	assert.Equal(t, "make build && go run ./bench/cmd/ferry-bench -only onboarding -apps 1000 -onboard-timeout 30m0s -onboard-floor=false "+
		"-fleet-peers 'argocd' -argocd-adopt -worker-args '--onboard-concurrency 8'", cfg.reproduce("onboarding", "-apps 1000"))

	cfg = DefaultConfig()
	cfg.FleetPeers = nil
	assert.Equal(t, "make build && go run ./bench/cmd/ferry-bench -only idle -fleet-peers ''", cfg.reproduce("idle"))
}
