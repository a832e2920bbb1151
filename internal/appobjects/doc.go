// Package appobjects makes Argo CD's Application objects of the control
// cluster Ferry's apps: a controller watches them (client-go informers, a
// rate-limited workqueue, leader election through a Lease) and turns each
// change into what Ferry's apps understand, through the Apps interface the
// worker implements with Temporal:
//
//   - an object created or changed starts its app or sends it the new spec,
//     validated as ferry app apply validates; an invalid one gets Argo CD's
//     InvalidSpecError condition naming every problem, and nothing else;
//   - the operation field is a sync, cleared once the app took it;
//   - the argocd.argoproj.io/refresh annotation is a refresh, then removed;
//   - deleting the object deletes the app, and Argo CD's resources finalizer
//     holds the object until the app's resources are gone.
//
// The app's status is written back to the object by the app itself
// (WriteStatus, called by an activity when the status changed).
//
// The leader also applies the AppProject and ApplicationSet objects of the
// control namespace as Ferry's projects and ApplicationSets (definitions.go,
// through the Definitions interface), and apps of apps write their children
// as objects (children.go).
package appobjects
