package workflows

// appSyncOptions are the app's syncPolicy.syncOptions.
func (s *appState) appSyncOptions() []string {
	if sp := s.app.Spec.SyncPolicy; sp != nil {
		return sp.SyncOptions
	}
	return nil
}
