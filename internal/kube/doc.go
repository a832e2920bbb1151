// Package kube is the Kubernetes side of a sync: it applies an
// Application's desired objects to one cluster wave by wave, compares them
// with what runs there, prunes what the Application no longer wants, and
// deletes everything it owns when the Application goes away.
//
// A Cluster holds the clients for one cluster (one region): built from a
// kubeconfig (NewCluster), or over clients the caller made
// (NewClusterForClients), a fake API in unit tests. Its methods are
// split by verb, in the manner of fluxcd/pkg/ssa: Apply (apply.go, one
// object in apply_object.go, the waits between waves in wait.go), Compare
// (compare.go, with its incremental cache in compare_cache.go, and Diff for
// people in compare_diff.go), pruning (prune.go), Delete, DeleteAll and
// Remaining (delete.go). The order is package syncplan's; the comparison is
// package diff's; ownership is tracking.go.
//
// Ownership. Every object Ferry applies carries the label
// ferry.dev/app=<app> and the annotation
// ferry.dev/tracking-id=<app>:<group>/<kind>:<namespace>/<name>. The label only
// narrows list requests; an object is the app's only when its tracking id is
// exactly the one its own identity gives, so an object that copied the label
// (or the whole metadata) of one of ours is never pruned or deleted.
//
// Sync options, from the app and each object's argocd.argoproj.io/sync-options
// annotation: CreateNamespace creates the destination namespace (untracked).
// ServerSideApply=true is what Ferry always does; ServerSideApply=false (a
// client-side apply, which Ferry does not have) is the object's error unless
// Replace=true makes it moot (app.SyncOptions.Unsupported).
// Replace=true writes with create or PUT instead of apply. Force=true
// deletes and re-creates an object whose change the API server refuses as
// immutable. Validate=false lets unknown fields through (they are dropped,
// as the API server would drop them). ApplyOutOfSyncOnly skips objects a
// comparison finds Synced, and leaves them out of the ChangeSet. Prune=false keeps an object out of every prune,
// PruneLast prunes it after everything else is applied, healthy and
// pruned, PrunePropagationPolicy picks foreground (default), background or
// orphan for prunes. Delete=false keeps an object when the app is deleted.
// RespectIgnoreDifferences makes a sync keep what ignoreDifferences ignores
// as it is live. SkipDryRunOnMissingResource lets an object whose kind is not
// served yet (its CRD comes from elsewhere) wait for its wave instead of
// stopping the sync before it starts. An object tracked by another Ferry app
// is taken over, as Argo CD does; FailOnSharedResource=true fails the sync
// before its first write instead (shared.go).
//
// Compare options (argocd.argoproj.io/compare-options) of an object:
// IgnoreExtraneous: once it is no longer desired it shows OutOfSync but
// counts as Synced for the app (ResourceState.CountsAs); any other is the
// object's error (app.ParseCompareOptions). Options that fail to
// read stop a sync before its first write and show in a compare as the
// object's Unknown state.
//
// The live cache (EnableLiveCache) keeps informers on the kinds in use,
// restricted to objects labelled ferry.dev/app: Compare then sends no
// request for what has not changed, and every change to a tracked object
// that Ferry did not make is reported as a Drift.
//
// Secrets are applied like any object, but neither their bodies nor any
// object's body ever enters an error or a message: messages name objects and
// field paths, not values; diffs mask Secret values.
//
//	cfg, err := kube.LoadConfig(kubeconfig, "us-east-1")
//	if err != nil { ... }
//	cluster, err := kube.NewCluster(cfg)
//	if err != nil { ... }
//	changes, err := cluster.Apply(ctx, kube.ApplyRequest{
//		App:       "guestbook",
//		Namespace: "guestbook",
//		Objects:   objs,
//		Prune:     true,
//		Progress:  func(p kube.Progress) { activity.RecordHeartbeat(ctx, p.String()) },
//	})
//	if kube.IsInvalid(err) || kube.IsUnhealthy(err) {
//		// the manifests are wrong, or a wave did not become healthy:
//		// retrying at once will not help
//	}
package kube
