// Package regionlive reads an app's objects as they run in its regions, and
// acts on them, through one kubeconfig context per region, named after it:
// for the ferry CLI on a user's machine and for ferry-server. Nothing here
// runs in a workflow: no object read here passes through a history.
//
//	rs := &regionlive.Regions{Kubeconfig: path}
//	r, err := rs.Region("us-east-1")
//	obj, err := r.Get(ctx, key)          // nil, nil when it is gone
//	nodes, err := r.Tree(ctx, managed)   // Argo CD's resource tree
//	err = r.Logs(ctx, c, opts, func(text string, at time.Time) { ... })
package regionlive
