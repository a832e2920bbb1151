// Package clusters reads and writes Argo CD's cluster Secrets: Secrets of
// the control namespace labelled argocd.argoproj.io/secret-type: cluster,
// whose keys name a cluster (name), its API server (server), the AppProject
// it is scoped to (project) and how to connect (config: bearerToken,
// username and password, tlsClientConfig, execProviderConfig). Each is a
// region of Ferry's: FromSecret turns one into the region and the
// rest.Config its workers connect with, Watch follows them as they are
// added, changed and removed, and NewSecret writes one, as argocd cluster
// add does.
//
//	w := clusters.Watch(ctx, kube, "argocd", func(list []clusters.Cluster) {
//		for _, c := range list { ... c.Region, c.Config, c.Err ... }
//	})
//
// A Secret's credentials stay in memory: the Region holds none of them,
// and no error repeats a value.
package clusters
