// Package netpolicy decides what the network fetches a render causes may
// reach: Git repositories (the app's own and remote Kustomize bases), Helm
// repository indexes, chart archives that an index.yaml names, chart
// dependencies and OCI registries. Two rules apply to each fetch:
//
//   - the worker's host policy (Hosts): loopback, private (RFC 1918,
//     fc00::/7), link-local, CGNAT, unspecified, multicast and cloud
//     metadata addresses are refused unless the operator lists them
//     (ferry-worker --render-allow-hosts). It is checked on the address
//     actually dialled (Hosts.DialContext, a net.Dialer Control function),
//     so a DNS name that resolves to such an address, a rebinding name, or
//     a redirect to one is refused as well; and on the URL before any
//     request (Hosts.CheckURL), so that a literal address or a metadata
//     name is refused without a DNS lookup;
//   - the app's project (RepoCheck): what the repository's files ask for
//     (a Chart.yaml dependency, an index.yaml archive URL outside its
//     repository, a kustomization's remote base) must be a repository the
//     project's sourceRepos allow.
//
// A refusal is a *DeniedError naming the URL (without credentials), the
// file that asked for it and the rule, with the fix.
//
//	hosts, err := netpolicy.ParseHosts([]string{"10.1.2.3", "git.internal:443"}, "--render-allow-hosts")
//	transport := &http.Transport{DialContext: hosts.DialContext}
//	ctx = netpolicy.WithRepoCheck(ctx, check) // the app's project
//	err = netpolicy.CheckRepo(ctx, depURL)
package netpolicy
