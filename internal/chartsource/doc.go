// Package chartsource reads Application sources that name a chart of a Helm
// repository (spec.source.chart with an http(s) repoURL) or of an OCI
// registry (oci://, or host/path with enableOCI), with the Helm SDK: it
// resolves a targetRevision (a version or a semver constraint) to the newest
// matching version, and checks a version out into a directory for the
// renderer, as gitsource does for commits.
//
// A repository's index.yaml, like a registry's tag list, is the chart side's
// ls-remote: listed once per Options.IndexTTL (or MaxAge) per worker however
// many Applications ask, concurrent callers joining one request (package
// listing), and fetched conditionally (If-None-Match, If-Modified-Since) when
// the server allows. A chart archive is fetched once per (repository, chart,
// version, digest) into CacheDir/archives, checked against its digest on
// every use (a corrupt or deleted one is fetched again), bounded by
// Options.MaxArchives and by the render sandbox's archive size and file
// limits. Dependencies that Chart.yaml takes from https:// or oci://
// repositories are fetched the same way before the render (Chart.lock's
// versions when it has them), never inside the sandbox.
//
//	charts, err := chartsource.New(chartsource.Options{CacheDir: dir})
//	version, err := charts.Resolve(ctx, "https://charts.example.com", "nginx", "1.*")
//	root, release, err := charts.Checkout(ctx, "https://charts.example.com", "nginx", version)
//	defer release() // root/nginx holds the chart
package chartsource
