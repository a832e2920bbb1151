package regions

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// Regions come from the configuration (the file or the flags) and, at run
// time, from Argo CD's cluster Secrets: a live Config (NewLive) is the
// configured regions plus those SetClusters gives, each lookup reading the
// set as it is at that moment. A cluster region never changes a configured
// one: one that clashes with it (its name, server or an alias) is refused,
// and so is one that clashes with a cluster region accepted before it.

// liveRegions is what a live Config reads: the configuration it was made
// of, and that plus the cluster regions accepted last.
type liveRegions struct {
	base    *Config
	current atomic.Pointer[Config]
}

// NewLive is a Config that answers as base (nil: no configuration) until
// SetClusters adds the regions of cluster Secrets to it. It is safe for
// concurrent use: lookups see either the set before a SetClusters or the
// one after.
func NewLive(base *Config) *Config {
	base = base.now()
	if base == nil {
		base = openWith(InClusterName, nil)
	}
	l := &liveRegions{base: base}
	l.current.Store(base)
	return &Config{live: l}
}

// now is the Config a lookup reads: c itself, or, for a live Config, the
// set as it is.
func (c *Config) now() *Config {
	if c != nil && c.live != nil {
		return c.live.current.Load()
	}
	return c
}

// SetClusters makes the regions of cluster Secrets those of list, beside
// the configured ones; c must come from NewLive. It returns, by region
// name, why a region was left out (a clash with a configured region or one
// listed before it, or a name, server or label that is not well formed);
// the others are in.
func (c *Config) SetClusters(list []Region) map[string]string {
	if c == nil || c.live == nil {
		panic("regions: SetClusters on a Config that NewLive did not make")
	}
	base := c.live.base
	refused := map[string]string{}
	var accepted []Region
	taken := base
	for _, r := range list {
		if msg := checkCluster(r, taken); msg != "" {
			refused[r.Name] = msg
			continue
		}
		r = r.clone()
		r.Aliases, r.InCluster = nil, false
		accepted = append(accepted, r)
		taken = base.with(accepted)
	}
	c.live.current.Store(taken)
	return refused
}

// with is c plus the cluster regions, which checkCluster accepted.
func (c *Config) with(clusters []Region) *Config {
	if c.open {
		return openWith(c.openInCluster, clusters)
	}
	merged, err := New(append(c.Regions(), clusters...))
	if err != nil {
		panic(fmt.Sprintf("regions: a checked cluster region does not fit: %v", err))
	}
	return merged
}

// openWith is the Config that accepts any well-formed region name, with
// inCluster as its in-cluster region, and knows the cluster regions given
// (their servers, labels and annotations).
func openWith(inCluster string, clusters []Region) *Config {
	c := &Config{open: true, openInCluster: inCluster, byName: map[string]int{}, byServer: map[string]int{}, byAlias: map[string]int{}}
	for i, r := range clusters {
		c.list = append(c.list, r.clone())
		c.byName[r.Name] = i
		if r.Server != "" {
			c.byServer[normalServer(r.Server)] = i
		}
	}
	return c
}

// checkCluster is "" when the cluster region r fits beside the regions of
// taken, else why not.
func checkCluster(r Region, taken *Config) string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch msg := checkName(r.Name); {
	case msg != "":
		bad("name: %s: name the cluster with a DNS label, such as prod-eu", msg)
	case r.Name == InClusterName || taken.open && r.Name == taken.openInCluster:
		bad("name: %q is the in-cluster region's: name the cluster otherwise", r.Name)
	case hasKey(taken.byName, r.Name):
		bad("name: region %q exists already (the workers' regions configuration or another cluster Secret): name the cluster otherwise", r.Name)
	case hasKey(taken.byAlias, r.Name):
		bad("name: %q is an alias of region %q: name the cluster otherwise", r.Name, taken.list[taken.byAlias[r.Name]].Name)
	}
	switch server := normalServer(r.Server); {
	case server == "":
		bad("server: required: the URL of the cluster's API server")
	case server == InClusterServer:
		bad("server: %s is Argo CD's in-cluster address, which the workers' --in-cluster-region maps: give the cluster's own URL", r.Server)
	case checkServer(server) != "":
		bad("server: %q %s", r.Server, checkServer(server))
	case hasKey(taken.byServer, server):
		bad("server: %s is region %q's already: one cluster Secret a server", r.Server, taken.list[taken.byServer[server]].Name)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		if msg := checkLabel(k, r.Labels[k]); msg != "" {
			bad("label %s", msg)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Annotations)) {
		if msg := checkKey(k); msg != "" {
			bad("annotation %q: %s", k, msg)
		}
	}
	if r.Project != "" {
		if msg := checkProject(r.Project); msg != "" {
			bad("project: %s", msg)
		}
	}
	return strings.Join(problems, "; ")
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}
