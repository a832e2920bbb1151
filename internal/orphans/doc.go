// Package orphans finds an app's orphaned resources as Argo CD does: the
// top-level objects (no owner references) of its destination namespace
// that no app tracks, when the app's AppProject has orphanedResources.
//
// It reads a region through the caller's clients (the user's kubeconfig in
// `ferry app resources --orphaned`), lists every namespaced kind the API
// server serves and can list, and leaves out:
//
//   - the objects the app itself has (its status' resources) and those
//     whose ferry.dev/tracking-id names a running app;
//   - the kinds Argo CD never watches (events, metrics, ""/Event,
//     coordination.k8s.io/Lease, ""/Endpoints) and those that
//     resource.exclusions/inclusions leave alone;
//   - what AppProject.IgnoresOrphan ignores (kinds the project denies, the
//     default ServiceAccount, kube-root-ca.crt, orphanedResources.ignore).
//
// Only keys leave this package: an object's body is never kept.
//
//	keys, err := orphans.Find(ctx, orphans.Clients{Discovery: d, Dynamic: dyn}, orphans.Request{...})
package orphans
