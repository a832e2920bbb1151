package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// scaleSteps onboard a fleet of n apps, then watch it idle; for the
// smallest fleet, Flux's idle cost follows on the same stack, and for the
// largest Argo CD's onboarding and idle cost (each when FleetPeers names it).
func scaleSteps(cfg *Config, n int) []step {
	var f *fleet
	var ferryOnboard, ferryIdle *Section
	poll := cfg.idlePoll(n)
	steps := []step{
		fleetOnboardStep(cfg, &f, n, poll, ScenarioOnboarding, ScenarioIdle, "", &ferryOnboard),
		fleetIdleStep(cfg, &f, n, poll, ScenarioIdle, "", &ferryIdle),
	}
	if n == slices.Min(cfg.ScaleApps) && slices.Contains(cfg.FleetPeers, PeerFlux) {
		steps = append(steps, step{ScenarioPeerIdle, fmt.Sprintf("Idle cost, Flux: %d apps polling every %s", n, poll), cfg.OnboardTimeout + cfg.IdleWindow + 3*time.Minute,
			func(ctx context.Context, e *Env, sec *Section) error {
				return PeerIdle(ctx, e, sec, n, poll, ferryIdle)
			}, ScenarioIdle})
	}
	if n == slices.Max(cfg.ScaleApps) && slices.Contains(cfg.FleetPeers, PeerArgoCD) {
		steps = append(steps, argoFleetSteps(cfg, n, poll, &f, &ferryOnboard, &ferryIdle)...)
	}
	return steps
}

// scenarioOnboardingForIdle is the onboarding that idle-cluster runs first.
const scenarioOnboardingForIdle = ScenarioOnboardingCluster + "-for-idle"

// clusterSteps onboard n apps on a Temporal cluster (scenario name), and
// watch them idle when idle names the idle scenario.
func clusterSteps(cfg *Config, n int, poll time.Duration, name, idle string) []step {
	var f *fleet
	on := " on the Temporal cluster"
	if idle == "" {
		return []step{fleetOnboardStep(cfg, &f, n, poll, name, "", on, nil)}
	}
	return []step{fleetOnboardStep(cfg, &f, n, poll, scenarioOnboardingForIdle, idle, on, nil), fleetIdleStep(cfg, &f, n, poll, idle, on, nil)}
}

// onboardStep onboards a fleet of n apps into *f; it runs for scenario
// name, and for also when that is selected. *section, when given, gets
// its section (for Argo CD's ratios).
func fleetOnboardStep(cfg *Config, f **fleet, n int, poll time.Duration, name, also, on string, section **Section) step {
	timeout := cfg.OnboardTimeout + 2*time.Minute + time.Duration(n)*20*time.Millisecond
	if cfg.OnboardFloor && on == "" {
		timeout += cfg.OnboardTimeout // the kubectl floor runs first, in the same step
	}
	return step{name: name, also: also, title: fmt.Sprintf("Onboarding%s: %d apps of %d resources", on, n, cfg.AppResources), timeout: timeout,
		run: func(ctx context.Context, e *Env, sec *Section) (err error) {
			if section != nil {
				*section = sec
			}
			*f, err = Onboard(ctx, e, sec, n, poll)
			return err
		}}
}

// idleStep watches the fleet *f idle; *section, when given, gets its
// section (for Flux's ratios).
func fleetIdleStep(cfg *Config, f **fleet, n int, poll time.Duration, name, on string, section **Section) step {
	watch := max(cfg.IdleWindow, 2*poll+poll/5)
	return step{name: name, title: fmt.Sprintf("Idle cost%s: %d apps polling every %s", on, n, poll), timeout: watch + poll + 5*time.Minute,
		run: func(ctx context.Context, e *Env, sec *Section) error {
			fl := *f
			switch {
			case fl == nil || len(fl.synced) == 0:
				return errors.New("no app of the fleet was onboarded")
			case len(fl.synced) < fl.applied*9/10:
				// Apps still syncing: the fleet is not idle. That is a
				// measured outcome (the onboarding's figures), not a failure.
				sec.Skipped = say(idleText{N: len(fl.synced), Applied: fl.applied}, "not-idle")
				return nil
			}
			if section != nil {
				*section = sec
			}
			return Idle(ctx, e, sec, fl)
		}}
}
