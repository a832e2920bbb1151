package contract

import "time"

// The onboarding gate: new apps take their first sync a bounded number at
// a time, in the order they asked (workflows/onboard_gate.go). One gate
// workflow per Temporal namespace admits them; a new app asks it with
// ActivityOnboardWant, waits for SignalOnboardGo, and says
// SignalOnboardDone once its first reconcile (with its automated sync)
// ended, or when it no longer waits (a user's sync or a delete went
// first). A first sync that waits rather than writes (for a wave's
// health, a hook, a retry) gives its place back at its first wait: the
// region's activity says SignalOnboardDone (SyncInput.OnboardPlace), or
// the app before a retry's wait.
const (
	// OnboardGateWorkflow is the gate's workflow type; OnboardGateID its ID.
	OnboardGateWorkflow = "OnboardGate"
	OnboardGateID       = "ferry/onboard-gate"
	// SignalOnboardWant (an OnboardRequest) queues an app.
	SignalOnboardWant = "onboard-want"
	// SignalOnboardDone (an OnboardRequest) frees the app's place, or takes
	// it out of the queue.
	SignalOnboardDone = "onboard-done"
	// SignalOnboardGo tells a queued app that its turn came.
	SignalOnboardGo = "onboard-go"
	// ActivityOnboardWant sends SignalOnboardWant, starting the gate if it
	// does not run (a local activity of the control worker).
	ActivityOnboardWant = "OnboardWant"
)

// DefaultOnboardWait is how long a new app waits for its turn, at least,
// before it asks the gate again (the worker's --onboard-wait; each app
// waits up to half as long again, spread by its name).
const DefaultOnboardWait = 30 * time.Minute

// OnboardRequest names the app that wants or frees a place, by its
// workflow ID; Capacity is the asking worker's --onboard-concurrency, the
// number of apps the gate lets onboard at once (the last asker's wins).
// Recheck: the app waited the longest it waits for a turn, and asks
// again; ActivityOnboardWant fails when the gate makes no progress.
type OnboardRequest struct {
	App      string `json:"app"`
	Capacity int    `json:"capacity,omitempty"`
	Recheck  bool   `json:"recheck,omitempty"`
}

// OnboardGateState is the gate's input: its state carried across
// continue-as-new.
type OnboardGateState struct {
	// Capacity is how many apps onboard at once.
	Capacity int `json:"capacity"`
	// Admitted are the apps onboarding now, with when each was let in.
	Admitted map[string]time.Time `json:"admitted,omitempty"`
	// Queue are the apps waiting, first first.
	Queue []string `json:"queue,omitempty"`
}

// OnboardGateView answers QueryStatus on the gate.
type OnboardGateView struct {
	// Capacity is how many apps onboard at once; Admitted how many do now,
	// Queued how many wait.
	Capacity int `json:"capacity"`
	Admitted int `json:"admitted"`
	Queued   int `json:"queued"`
}
