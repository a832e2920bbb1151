package workflows

import "github.com/ferry-gitops/ferry/internal/app"

// Drift is what a region worker's live cache saw: resources of the app
// changed by someone else (kubectl edit, scale, delete). It rides on the
// refresh signal, so its handling is a refresh's: compare now, and with
// selfHeal sync back. It names resources and field managers only.
type Drift struct {
	Region string `json:"region"`
	// Resources are the changed resources, at most a few dozen.
	Resources []app.ResourceKey `json:"resources,omitempty"`
	// More counts the changed resources left out of Resources.
	More int `json:"more,omitempty"`
	// By names who changed them: field managers, or "deleted".
	By []string `json:"by,omitempty"`
}

// appSyncOptions are the app's syncPolicy.syncOptions.
func (s *appState) appSyncOptions() []string {
	if sp := s.app.Spec.SyncPolicy; sp != nil {
		return sp.SyncOptions
	}
	return nil
}
