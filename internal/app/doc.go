// Package app holds Ferry's Application: Argo CD's argoproj.io/v1alpha1
// Application (the subset Ferry supports, plus spec.destinations for fan-out),
// its parsing and validation, and the status Ferry reports, shaped like Argo
// CD's so users recognise it.
//
// Parse reads one Application strictly: unknown fields and Argo CD fields
// Ferry does not support yet are refused, never ignored. Validate checks the
// values against the installation (its regions, its in-cluster region) and
// lists every problem at once. Neither fills in defaults: the accessor
// methods (Source.Revision, Application.PollInterval, Destinations,
// SyncOptions, RetryPolicy.Delay) apply them, so the spec stays as the user
// wrote it. Everything here is pure and deterministic, so workflows may call
// it.
//
//	a, err := app.Parse(data)
//	if err != nil {
//		return err // a *ValidationError for field problems
//	}
//	rc, err := regions.FromFlags([]string{"us-east-1", "eu-west-1"}, "us-east-1")
//	if err != nil {
//		return err
//	}
//	if err := app.Validate(a, app.ValidateOptions{Regions: rc}); err != nil {
//		return err // application "guestbook": spec.source.repoURL: required: ...
//	}
//	for _, t := range a.Destinations(rc) {
//		fmt.Println(t.Region, t.Namespace, a.Spec.Source.Revision())
//	}
//	next := a.PollInterval() + app.Jitter(a.Metadata.Name, a.PollInterval())
package app
