package contract

import (
	"time"
)

// A region worker that is not also a control worker never renders: it has
// no Git credentials, no plugins and no render sandbox. When it lacks a
// target's manifests it asks the control side for them through a workflow
// of type HandOverWorkflow, which runs the control activity
// ActivityHandOver. The set travels sealed to a key that only the asking
// worker process holds (internal/handover), so the history carries
// ciphertext, never manifests in clear.
const (
	// HandOverWorkflow hands a region worker the manifests of a target,
	// loaded on the control side and sealed to the region's key.
	HandOverWorkflow = "HandOverManifests"
	// ActivityHandOver loads the target's set on the control side (from
	// its cache, else by rendering) and seals it to the asker's key.
	ActivityHandOver = "HandOverManifests"
)

// HandOverInput asks for one target's manifests.
type HandOverInput struct {
	Target Target `json:"target"`
	// Region is the asking worker's region, for the workflow's ID and
	// errors.
	Region string `json:"region"`
	// Project is the app's project, as the region read it from the app's
	// workflow: its sourceRepos bind what a render fetches.
	Project string `json:"project,omitempty"`
	// PublicKey is the asking worker's key, which the set is sealed to.
	PublicKey []byte `json:"publicKey"`
}

// HandOverResult is the set, sealed.
type HandOverResult struct {
	Sealed []byte `json:"sealed"`
}

// handOverTimeout bounds a render on the control side, a cold one of a
// large chart included.
const HandOverTimeout = 10 * time.Minute
