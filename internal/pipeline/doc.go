// Package pipeline wires a render pipeline together, in one place for
// every caller: the Git clone cache (gitsource.Repos), the chart cache
// (chartsource.Charts), the manifest cache (in memory or in Redis) and its
// Sealer, the renderer (in this process or in a render sandbox), and the
// manifests.Loader that ties them together. The worker, `ferry app diff`
// and the benchmarks each turn their own flags into Options and call New;
// what differs between them is in Options, not in how they assemble the
// pieces.
//
//	p, err := pipeline.New(pipeline.Options{CacheDir: dir, Cache: pipeline.Cache{Memory: manifests.DefaultMemoryBytes, TTL: time.Hour}})
//	defer p.Close()
//	set, err := p.Loader.LoadApp(ctx, manifests.Request{RepoURL: url, SHA: sha, Source: src, App: name, Namespace: ns})
//
// Its own package, not part of internal/manifests: the Loader is defined
// by what it consumes (Checkouter, ChartFetcher, Cache, SourceRenderer)
// and is tested with fakes of them; this package is what knows the real
// ones, the render sandboxes among them, and the worker's refusals of the
// sandboxes that cannot hold where it runs.
package pipeline
