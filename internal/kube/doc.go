// Package kube is the Kubernetes side of a sync: it applies an
// Application's desired objects to one cluster with server-side apply,
// compares them with what runs there, prunes what the Application no longer
// wants, and deletes everything it owns when the Application goes away.
//
// A Cluster holds the clients for one cluster (one region). Its methods are
// split by verb, in the manner of fluxcd/pkg/ssa: Apply (apply.go), Compare
// (compare.go), pruning (prune.go), Delete, DeleteAll and Remaining
// (delete.go). Ordering is data (order.go); ownership is tracking.go.
//
// Ownership. Every object Ferry applies carries the label
// ferry.dev/app=<app> and the annotation
// ferry.dev/tracking-id=<app>:<group>/<kind>:<namespace>/<name>. The label only
// narrows list requests; an object is the app's only when its tracking id is
// exactly the one its own identity gives, so an object that copied the label
// (or the whole metadata) of one of ours is never pruned or deleted.
//
// Secrets are applied like any object, but neither their bodies nor any
// object's body ever enters an error or a message: messages name objects and
// field paths, not values.
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
//	})
//	if kube.IsInvalid(err) {
//		// the manifests are wrong: retrying will not help
//	}
package kube
