// Package manifests keeps rendered manifest sets, by Key, in a Cache, and
// names each set by a content Digest.
//
// The cache is only ever an optimisation: rendering is deterministic for a
// commit, so a miss (an empty, flushed, expired or unreachable cache, or an
// unreadable entry) re-renders from Git and gives the same objects and the
// same digest. Workflow histories carry the digest; the objects stay here.
//
// Memory is the in-process cache (LRU by bytes, with a TTL); Redis shares
// one between workers and degrades to misses when Redis is down. Loader
// ties Git, rendering and the cache together. Keys name the renderer
// version (render.Version plus the worker's Capabilities), so workers that
// share a cache must run the same binary with the same render settings;
// Directory and Kustomize sets are shared by every Application on a path,
// Helm sets are per release name and namespace:
//
//	loader := &manifests.Loader{Repos: repos, Cache: manifests.NewMemory(0, time.Hour), Renderer: &render.Renderer{}}
//	set, err := loader.LoadApp(ctx, manifests.Request{RepoURL: src.RepoURL, SHA: sha, Source: src, App: name, Namespace: ns})
//	// set.Digest, set.Objects, set.CacheHit
package manifests
