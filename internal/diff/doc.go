// Package diff compares a live Kubernetes object with the object a sync
// would make of it, without the noise of what the API server fills in,
// and shows the difference to people without showing Secret values.
//
// The desired side is not the manifest but its prediction: the response
// of a server-side dry-run apply (package kube makes it), so defaults,
// admission, int-or-string forms and Secret stringData are already what
// the server stores. Both sides are then normalised (Normalize: status,
// managedFields, resourceVersion, generation, timestamps and server-owned
// annotations go) and an app's ignoreDifferences rules (Rules: JSON
// pointers, jq path expressions, fields owned by named managers) remove
// what the app says to ignore. What is left is compared; Paths names where
// the sides differ, never with which values.
//
// Unified renders a difference as a unified diff of YAML, like kubectl
// diff, with the values of every Secret masked (MaskSecret): keys stay, and
// values that differ get masks of different lengths.
//
//	rules, err := diff.Compile(app.Spec.IgnoreDifferences)
//	if err != nil { ... }
//	res := diff.Compare(live, predicted, rules)
//	if !res.Equal() {
//		fmt.Println(diff.Summarize(res.Paths(3)))
//		fmt.Print(res.Unified("Deployment/shop/web", 64<<10))
//	}
package diff
