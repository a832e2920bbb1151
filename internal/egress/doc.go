// Package egress gives a config-management plugin the network its
// operator allows it, and nothing else, while its render sandbox keeps no
// network interface of its own.
//
// The operator lists, per plugin, the hosts it may reach (ferry-worker
// --plugin-egress NAME=HOSTS; Argo CD has no such list, it is Ferry's).
// For each render of such a plugin the worker starts a Proxy outside the
// sandbox: an HTTP proxy (CONNECT for HTTPS, absolute URLs for plain HTTP)
// on a Unix socket in a directory of its own, which the sandbox mounts.
// The proxy admits a target only when its host is on the plugin's list,
// then applies the worker's host policy (netpolicy.Hosts, the
// --render-allow-hosts rules that render fetches obey): a loopback,
// private, link-local, CGNAT or cloud metadata address is refused, on the
// URL and again on the address actually dialled, so that a listed name
// resolving (or rebinding) to such an address is refused too.
//
// Inside the sandbox the renderer runs Forward before the plugin's
// commands: a relay from 127.0.0.1 on the sandbox's own loopback to the
// socket, and Env names it in HTTPS_PROXY and HTTP_PROXY for the plugin.
// Every connection the proxy refuses is kept (Proxy.Refused), so that the
// render's error names the host, why, and the flag that lists it
// (Explain).
//
//	rules, _ := egress.ParseRules([]string{"vault=vault.example.com:8200"}, hosts)
//	proxy, _ := egress.Start(dir, rules.For("vault"))
//	defer proxy.Close()
//	// mount proxy.Dir() in the sandbox; there: addr, stop, _ := egress.Forward(socket)
//	err = egress.Explain(err, proxy)
package egress
